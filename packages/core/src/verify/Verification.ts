import { Effect } from "effect"
import { type CheckResult, describeCheck, shown } from "../domain/CheckResult.js"
import { type CheckRequest, CheckRunner, type CheckRun } from "./CheckRunner.js"
import type { JournalCheck } from "../state/JournalEntry.js"
import { oneLine } from "../text/Text.js"
import { LoopReporter } from "../output/LoopReporter.js"
import type { Redactor } from "../output/Redact.js"

/** What the checks of one claim found: every check run, in order, and the one that failed (the last run), if one did. */
export interface Verification {
  readonly results: ReadonlyArray<CheckRun>
  readonly failed: CheckRun | null
}

/**
 * Runs the project's checks of a claim (`--verify`) in the order given, stopping at the first
 * that fails: only a claim that passes them all stands.
 */
export const verifyClaim = (commands: ReadonlyArray<string>, request: Omit<CheckRequest, "command">) =>
  Effect.gen(function*() {
    const checks = yield* CheckRunner
    const reporter = yield* LoopReporter
    const results: Array<CheckRun> = []
    for (const command of commands) {
      yield* reporter.line(`checking the claim: ${oneLine(command, 120)}`)
      const result = yield* checks.run({ ...request, command })
      results.push(result)
      if (!result.passed) return { results, failed: result } satisfies Verification
    }
    return { results, failed: null } satisfies Verification
  })

/** The record's part of a check: everything but its output. */
export const checkResult = ({ output: _output, ...result }: CheckRun): CheckResult => result

/** The failed check as the error journal keeps it, its output redacted like the agent's. */
export const journalCheck = (failed: CheckRun, redact: Redactor): JournalCheck => ({
  command: failed.command,
  result: describeCheck(failed),
  output: redact(failed.output)
})

/** What the next prompt tells the agent about a claim the checks rejected. */
export const rejectionNote = (iteration: number, commands: ReadonlyArray<string>, failed: CheckRun) =>
  `In iteration ${iteration} you claimed completion, and the loop checked the claim by running the project's checks ` +
  `(${commands.map((command) => `\`${shown(command)}\``).join(", ")}, in that order; all must pass). ` +
  `\`${shown(failed.command)}\` failed (${describeCheck(failed)}), so the claim was rejected; its output is under "Previous errors" below. ` +
  `Fix what it reports, run \`${shown(failed.command)}\` yourself until it passes, and only then claim completion again.`

/**
 * Why the failure breaker counts the iteration (the same check failing the same way is the same
 * error), and why the record says the claim was not accepted: `verify failed: pnpm test (exit 1)`.
 */
export const checkFailure = (failed: CheckResult) => `verify failed: ${shown(failed.command)} (${failed.timedOut ? "timed out" : failed.signal ?? `exit ${failed.exitCode}`})`

/** The check that rejected a recorded claim, as messages name it (`pnpm test (exit 1, 4.2s)`); null when none did. */
export const rejectingCheck = (results: ReadonlyArray<CheckResult>) => {
  const failed = results.find((result) => !result.passed)
  return failed === undefined ? null : `${shown(failed.command)} (${describeCheck(failed)})`
}

/** What every prompt tells the agent when its claims are checked: which commands decide. */
export const checksSection = (commands: ReadonlyArray<string>) => ({
  title: "How your claim is checked",
  body: `When you claim completion, the loop runs these commands in the repository, in this order, and believes the claim only if every one exits 0:\n` +
    `${commands.map((command) => `- \`${shown(command)}\``).join("\n")}\n` +
    "Run them yourself before you claim completion."
})
