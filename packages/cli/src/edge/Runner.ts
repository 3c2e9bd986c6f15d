import { makeRunMain } from "@effect/platform/Runtime"
import { constVoid } from "effect/Function"

/**
 * Runs spool's main effect as `NodeRuntime.runMain` does, but for signals: spool takes those itself
 * (`StopSignals`), to tell a stop, give the agent its grace period and end with the stop's exit
 * code, where the runtime's own handler would interrupt the whole program at once. The process
 * ends here and nowhere else: by `exit` with the code the teardown gives, unless that is 0 (then
 * Node ends it once it has written what is pending).
 */
export const runMain = (exit: (code: number) => void) =>
  makeRunMain(({ fiber, teardown }) => {
    // The main fiber may wait on nothing Node counts (a Deferred, another fiber): the process stays up for it.
    const keepAlive = setInterval(constVoid, 2 ** 31 - 1)
    fiber.addObserver((ended) => {
      clearInterval(keepAlive)
      teardown(ended, (code) => {
        if (code !== 0) exit(code)
      })
    })
  })
