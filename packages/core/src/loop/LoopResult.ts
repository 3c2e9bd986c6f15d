import { Schema } from "effect"
import type { LoopStatus, StopReason } from "../domain/Domain.js"
import { oneLine } from "../text/Text.js"

/** The failure breaker tripped: `failures` iterations failed in a row (1 with `--fail-fast`). Exit code 1. */
export class LoopFailedError extends Schema.TaggedError<LoopFailedError>()("LoopFailedError", {
  iteration: Schema.Int,
  exitCode: Schema.NullOr(Schema.Int),
  signal: Schema.NullOr(Schema.String),
  /** What the agent reported when it failed (an API error), if anything. */
  error: Schema.NullOr(Schema.String),
  outcome: Schema.String,
  failures: Schema.Int,
  failFast: Schema.Boolean,
  /** The error every failure of the streak shared, when they did. */
  sameError: Schema.NullOr(Schema.String),
  /** When the last failure was a claim rejected by a `--verify` check: which, and how it ended. */
  check: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
}) {
  override get message() {
    const how = this.outcome === "timeout"
      ? "timed out"
      : this.signal !== null
      ? `was killed by ${this.signal}`
      : this.exitCode === 0 && this.error !== null
      ? `reported: ${oneLine(this.error)}`
      : `exited with code ${this.exitCode}`
    const what = this.check === null ? `the harness ${how}` : `its claim failed the check ${this.check}`
    if (this.failFast) {
      return `iteration ${this.iteration} failed (${what}) and --fail-fast is set; see spool ralph --status`
    }
    if (this.sameError !== null) {
      return `the same error ${this.failures} times in a row (--max-consecutive-failures ${this.failures}): ${oneLine(this.sameError)}; see spool ralph --status`
    }
    return `${this.failures} iterations failed in a row (--max-consecutive-failures ${this.failures}); the last one: ${what}; see spool ralph --status`
  }
}

/**
 * How a run ended, short of a failure: `complete` (exit 0), `max-iterations` (3), `stopped` by a
 * guard (4), `usage-limit` not waited out (5, with `resumeAt` when it would have resumed),
 * `deadline`: `--deadline` came first (75: not done, to go on in a later job).
 */
export interface LoopResult {
  readonly run: string
  readonly status: Extract<LoopStatus, "complete" | "max-iterations" | "stopped" | "usage-limit" | "deadline" | "review-rejected">
  readonly reason: StopReason
  readonly iterations: number
  /** The line that says why the run ended. */
  readonly message: string
  readonly resumeAt: number | null
}

