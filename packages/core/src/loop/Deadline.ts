import { clock } from "../guards/LimitWait.js"
import { formatDuration } from "../text/Figures.js"

/**
 * Whether an iteration may start before `--deadline` (at `deadline`): not once it has come, nor
 * when the longest of the run's iterations so far (`durations`) would not end before it. A run
 * with no iteration yet has nothing to go by, and starts.
 */
export type DeadlineDecision = { readonly _tag: "Start" } | { readonly _tag: "Stop"; readonly message: string }

const later = "not done; continue in a later job with --resume"

export const beforeIteration = (deadline: number, now: number, durations: ReadonlyArray<number>): DeadlineDecision => {
  if (now >= deadline) return { _tag: "Stop", message: `stopped: --deadline ${clock(deadline)} has come; ${later}` }
  const longest = durations.reduce((a, b) => Math.max(a, b), 0)
  if (now + longest > deadline) {
    return {
      _tag: "Stop",
      message: `stopped: --deadline ${clock(deadline)} would come before another iteration ended ` +
        `(the longest so far took ${formatDuration(longest)}, ${formatDuration(deadline - now)} are left); ${later}`
    }
  }
  return { _tag: "Start" }
}

/** The line of a run whose iteration the deadline stopped. */
export const deadlineCame = (deadline: number) => `stopped: --deadline ${clock(deadline)} came during the iteration; ${later}`
