import type { LoopResult, SweepEnding } from "@spool/core"
import { Data } from "effect"

/** Every exit code spool ends with, and what it means: the help and README list them from here. */
const exitCodes = {
  Completed: { code: 0, meaning: "completed: the promise was accepted (in a sweep: for every change it ran), or --status, --add-context, --clear-context done" },
  Failed: { code: 1, meaning: "failed: iterations failed in a row (--max-consecutive-failures, --fail-fast), or a fatal error (in a sweep: in any change, or a completed change left unmerged with --merge)" },
  Usage: { code: 2, meaning: "usage error: bad options, unknown change, no tree of changes (or several)" },
  MaxIterations: { code: 3, meaning: "--max-iterations reached without the completion promise" },
  GuardStop: { code: 4, meaning: "a guard stopped the loop: --max-cost, --max-tokens, --max-duration or --stall-iterations" },
  AwaitingApproval: {
    code: 7,
    meaning: "work waits for a person: a --merge --approve sweep left a change awaiting approval (--approve <change>, or --reject <change> \"<why>\")"
  },
  UsageLimit: { code: 5, meaning: "a usage limit that does not lift within --max-limit-wait (the time to retry is in --status)" },
  ReviewRejected: { code: 6, meaning: "the reviewers turned the claim down --max-reviews times (--review): a person should look; their findings are in --status" },
  Busy: {
    code: 73,
    meaning: "another loop has the change: a live loop's lock, or another machine's lease on the remote (nothing was done), or the lease was lost to another (nothing more was written)"
  },
  Deadline: { code: 75, meaning: "not done: --deadline came first; continue in a later job with --resume" },
  HangUp: { code: 129, meaning: "stopped because its terminal closed (SIGHUP)" },
  Interrupted: { code: 130, meaning: "interrupted (Ctrl-C)" },
  PipeClosed: { code: 141, meaning: "stopped because its output was closed (e.g. piped into head)" },
  Terminated: { code: 143, meaning: "stopped by SIGTERM" }
} as const

type ExitCodes = typeof exitCodes

export const ExitCode = Object.fromEntries(Object.entries(exitCodes).map(([name, { code }]) => [name, code])) as {
  readonly [K in keyof ExitCodes]: ExitCodes[K]["code"]
}

/** In increasing order, for the help. */
export const exitCodeTable: ReadonlyArray<{ readonly code: number; readonly meaning: string }> = Object.values(exitCodes)
  .slice()
  .sort((a, b) => a.code - b.code)

/** Why spool was stopped from outside: a signal, or its output pipe closing. */
export type StopSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "EPIPE"

/** How a run of spool ended, as far as its exit code goes. */
export type Outcome = Data.TaggedEnum<{
  /** Help, the version, completions, or a mode's answer (--status, --add-context, ...). */
  Done: {}
  /** The loop ran and ended so. */
  LoopEnded: { readonly status: LoopResult["status"] }
  /** A sweep ran: every change it ran completed, or the ending that matters most (see core's sweepEnding). */
  SweepEnded: { readonly ending: SweepEnding }
  /** A failure, told to the user in one line: a usage error, or any other. */
  Failed: { readonly usage: boolean }
  /** Another loop has the change (its lock, or its lease), or took it: told in one line. */
  Busy: {}
  /** A signal, or the output closing, stopped it. */
  Stopped: { readonly reason: StopSignal }
  /** Interrupted from within: Ctrl-C at a question, which arrives as a key. */
  Interrupted: {}
  /** A defect: something spool did not expect. */
  Crashed: {}
}>
export const Outcome = Data.taggedEnum<Outcome>()

const loopEnded = {
  complete: ExitCode.Completed,
  "max-iterations": ExitCode.MaxIterations,
  stopped: ExitCode.GuardStop,
  "usage-limit": ExitCode.UsageLimit,
  deadline: ExitCode.Deadline,
  "review-rejected": ExitCode.ReviewRejected
} as const

const stopped = { SIGINT: ExitCode.Interrupted, SIGTERM: ExitCode.Terminated, SIGHUP: ExitCode.HangUp, EPIPE: ExitCode.PipeClosed } as const

/** The exit code of each way spool can end: decided here alone. */
export const exitCodeOf: (outcome: Outcome) => number = Outcome.$match({
  Done: () => ExitCode.Completed,
  LoopEnded: ({ status }) => loopEnded[status],
  SweepEnded: ({ ending }) =>
    ending === "failed" || ending === "not-merged"
      ? ExitCode.Failed
      : ending === "interrupted"
      ? ExitCode.Interrupted
      : ending === "awaiting-approval"
      ? ExitCode.AwaitingApproval
      : loopEnded[ending],
  Failed: ({ usage }) => usage ? ExitCode.Usage : ExitCode.Failed,
  Busy: () => ExitCode.Busy,
  Stopped: ({ reason }) => stopped[reason],
  Interrupted: () => ExitCode.Interrupted,
  Crashed: () => ExitCode.Failed
})
