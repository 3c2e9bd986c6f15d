import { Effect } from "effect"
import { finishRun, recordingStop } from "./LoopEnding.js"
import type { LoopRequest } from "./LoopRequest.js"
import { startRun } from "./LoopStart.js"
import { type End, firstStep, type Next, step } from "./LoopStep.js"

/**
 * Runs iterations until the promise is accepted, `maxIterations` have run or a guard stops the
 * loop, holding the change's lock throughout (it stops if the lock is lost). A usage limit, met
 * by this loop or by another one sharing its gate, is waited out and the same iteration runs
 * again. Each state and each iteration's record is published as `LoopEvents`.
 */
export const runLoop = (input: LoopRequest) =>
  Effect.gen(function*() {
    const start = yield* startRun(input)
    if (start._tag === "Done") return start.result
    const { run } = start
    const ending: Next | End = yield* Effect.iterate(firstStep(run), {
      while: (s): s is Next => s._tag === "Next",
      body: (next) => step(run, next)
    }).pipe(recordingStop(run))
    if (ending._tag !== "End") return yield* Effect.dieMessage("the loop ended without a result")
    return yield* finishRun(run, ending.result)
  }).pipe(Effect.scoped)
