import { Schema } from "effect"

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
