import { Schema } from "effect"
import { formatDuration } from "../text/Figures.js"
import { oneLine } from "../text/Text.js"

/**
 * What one `--verify` command did after a claim: how it ended and how long it took. A check passes
 * only by exiting 0; one stopped at `--verify-timeout` has `timedOut` and the signal that ended it.
 */
export const CheckResult = Schema.Struct({
  command: Schema.String,
  exitCode: Schema.NullOr(Schema.Int),
  signal: Schema.NullOr(Schema.String),
  timedOut: Schema.Boolean,
  durationMs: Schema.Number,
  passed: Schema.Boolean
})
export type CheckResult = typeof CheckResult.Type

/** `exit 1, 4.2s`, `killed by SIGSEGV, 1.0s`, `timed out after 10m00s`. */
export const describeCheck = (result: CheckResult) =>
  result.timedOut
    ? `timed out after ${formatDuration(result.durationMs)}`
    : `${result.signal !== null ? `killed by ${result.signal}` : `exit ${result.exitCode}`}, ${formatDuration(result.durationMs)}`

/** A check's command as messages show it: on one line, cut at 80 characters. */
export const shown = (command: string) => oneLine(command, 80)

/** What the summary line says of the checks: `verified: pnpm test 3.1s` or `verify failed: pnpm test (exit 1, 4.2s)`. */
export const describeVerification = (results: ReadonlyArray<CheckResult>) => {
  const failed = results.find((result) => !result.passed)
  return failed === undefined
    ? `verified: ${results.map((result) => `${shown(result.command)} ${formatDuration(result.durationMs)}`).join(", ")}`
    : `verify failed: ${shown(failed.command)} (${describeCheck(failed)})`
}
