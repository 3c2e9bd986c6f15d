import { Effect } from "effect"

/** Every exit code spool ends with, and what it means: the help and README list them from here. */
const exitCodes = {
  Completed: { code: 0, meaning: "completed: the promise was accepted (or --status, --add-context, --clear-context done)" },
  Failed: { code: 1, meaning: "failed: an iteration failed under --fail-fast, or a fatal error" },
  Usage: { code: 2, meaning: "usage error: bad options, unknown change, no .spool/ directory" },
  MaxIterations: { code: 3, meaning: "--max-iterations reached without the completion promise" },
  Interrupted: { code: 130, meaning: "interrupted (Ctrl-C)" },
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
