import type { IterationRecord, LoopState } from "../domain/Domain.js"
import { type GuardCounters, initialCounters } from "../guards/Guards.js"

/**
 * What `--resume` makes of a change's last run, in one place:
 * - `Fresh`: there is none, so a new run starts
 * - `Done`: it completed, so nothing runs and the answer is that it is done
 * - `Continue`: it goes on, its iterations numbered on from the last one recorded, its spend, time
 *   and breakers' counts carried over, so that every cap counts the whole run
 */
export type ResumePlan =
  | { readonly _tag: "Fresh" }
  | { readonly _tag: "Done"; readonly run: string; readonly iteration: number }
  | {
    readonly _tag: "Continue"
    readonly run: string
    /** When the run first started (ISO). */
    readonly startedAt: string
    /** The first iteration of this sitting: one after the last the history records. */
    readonly iteration: number
    /** The run's time before this sitting. */
    readonly elapsedMs: number
    readonly counters: GuardCounters
  }

const millis = (iso: string) => {
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? 0 : ms
}

/**
 * The plan for `state` (the change's last run, if any) and `last`, the newest record of that run
 * in its history (an iteration cut short before it was recorded, as by a kill, runs again).
 */
export const planResume = (state: LoopState | null, last: IterationRecord | null): ResumePlan => {
  if (state === null) return { _tag: "Fresh" }
  const recorded = last !== null && last.run === state.run ? last.iteration : 0
  if (state.status === "complete") return { _tag: "Done", run: state.run, iteration: recorded }
  const guards = state.guards
  return {
    _tag: "Continue",
    run: state.run,
    startedAt: state.startedAt,
    iteration: recorded + 1,
    elapsedMs: state.elapsedMs ?? Math.max(0, millis(state.updatedAt) - millis(state.startedAt)),
    counters: guards === null ? initialCounters : {
      spend: { costUsd: guards.costUsd, tokens: guards.tokens },
      stalledIterations: guards.stalledIterations,
      consecutiveFailures: guards.consecutiveFailures,
      failureFingerprints: state.failureStreak ?? []
    }
  }
}
