import { Clock, Effect } from "effect"
import { LoopReporter } from "../output/LoopReporter.js"
import { openTaskCount } from "../prompt/Tasks.js"
import { ErrorJournal } from "../state/ErrorJournal.js"
import { withinGrace } from "../harness/Grace.js"
import type { LoopResult } from "./LoopResult.js"
import { compactStamp, type LoopRun } from "./LoopRun.js"
import type { step } from "./LoopStep.js"

/** What an iteration's step may fail with. */
type StepError = Effect.Effect.Error<ReturnType<typeof step>>

/** The state a run that failed or was interrupted leaves, kept beyond this machine as it can be. */
export const recordingStop = (run: LoopRun) => <A, R>(iterations: Effect.Effect<A, StepError, R>) =>
  iterations.pipe(
    Effect.tapError((error) =>
      // The state of a change whose lock another loop took is that loop's to write.
      error._tag === "LockLostError" && error.reason === "TakenOver" ? Effect.void : run.saveState({
        status: "failed",
        stopReason: error._tag === "LoopFailedError" ? "failures" : "error",
        stopMessage: error.message,
        resumeAt: null
      }).pipe(Effect.zipRight(run.checkpoint), Effect.ignore)
    ),
    Effect.onInterrupt(() =>
      run.saveState({ status: "interrupted", stopReason: "interrupted", resumeAt: null }).pipe(Effect.zipRight(withinGrace(run.checkpoint)), Effect.ignore)
    )
  )

/** The run's end: its state and line, the error journal archived once the change is done, and a last checkpoint. */
export const finishRun = (run: LoopRun, result: LoopResult) =>
  Effect.gen(function*() {
    const reporter = yield* LoopReporter
    const journal = yield* ErrorJournal
    const { change, options } = run.input
    const resumeAt = result.resumeAt === null ? null : new Date(result.resumeAt).toISOString()
    yield* run.saveState({ status: result.status, stopReason: result.reason, stopMessage: result.message, resumeAt })
    yield* reporter.line(result.message)
    if (result.status === "complete") {
      const open = openTaskCount(yield* run.inputs.readTasks)
      if (!options.keepErrors && open === 0) {
        const archived = yield* journal.archive(change.id, compactStamp(yield* Clock.currentTimeMillis))
        if (archived !== null) yield* reporter.line(`error journal archived to ${archived}; errors.md is now empty`)
      }
    }
    yield* run.checkpoint
    return result satisfies LoopResult
  })
