import { Effect } from "effect"

/** Every exit code spool ends with, and what it means: the help and README list them from here. */
const exitCodes = {
  Completed: { code: 0, meaning: "completed: the promise was accepted (or --status, --add-context, --clear-context done)" },
  Failed: { code: 1, meaning: "failed: iterations failed in a row (--max-consecutive-failures, --fail-fast), or a fatal error" },
  Usage: { code: 2, meaning: "usage error: bad options, unknown change, no .spool/ directory" },
  MaxIterations: { code: 3, meaning: "--max-iterations reached without the completion promise" },
  GuardStop: { code: 4, meaning: "a guard stopped the loop: --max-cost, --max-tokens, --max-duration or --stall-iterations" },
  UsageLimit: { code: 5, meaning: "a usage limit that does not lift within --max-limit-wait (the time to retry is in --status)" },
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

export const setExitCode = (code: number) => Effect.sync(() => void (process.exitCode = code))
