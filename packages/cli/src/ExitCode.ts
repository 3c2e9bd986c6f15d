import { Effect } from "effect"

/**
 * Exit codes: 0 completed, 1 failed (fail-fast or a fatal error), 2 usage error,
 * 3 max iterations reached without completion, 130 interrupted (SIGINT), 143 terminated (SIGTERM).
 */
export const ExitCode = {
  Completed: 0,
  Failed: 1,
  Usage: 2,
  MaxIterations: 3,
  Interrupted: 130,
  Terminated: 143
} as const

export const setExitCode = (code: number) => Effect.sync(() => void (process.exitCode = code))
