import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, TestClock } from "effect"
import { withinGrace } from "../src/harness/Grace.js"
import { currentGracePeriod } from "../src/harness/HarnessProcess.js"

describe("what a stopping loop still does, within the grace period (withinGrace)", () => {
  it.effect("gives what it finished with in time", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* withinGrace(Effect.succeed("pushed")), Option.some("pushed"))
    }))

  it.effect("keeps its failure", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* Effect.flip(withinGrace(Effect.fail("refused"))), "refused")
    }))

  it.effect("stops what does not finish once the grace period is over, even from a finalizer, and gives none", () =>
    Effect.gen(function*() {
      const stopped = yield* Deferred.make<void>()
      const hanging = Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(stopped, undefined)))
      // Run as a finalizer runs: uninterruptibly.
      const fiber = yield* Effect.fork(Effect.uninterruptible(withinGrace(hanging)))
      yield* TestClock.adjust("4 seconds")
      assert.isFalse(yield* Deferred.isDone(stopped))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(fiber), Option.none())
      assert.isTrue(yield* Deferred.isDone(stopped))
    }))

  it.effect("ends as soon as the grace period does (a second Ctrl-C)", () =>
    Effect.gen(function*() {
      const result = yield* withinGrace(Effect.never).pipe(Effect.locally(currentGracePeriod, Effect.void))
      assert.deepStrictEqual(result, Option.none())
    }))
})
