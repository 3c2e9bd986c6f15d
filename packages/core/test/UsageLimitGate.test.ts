import { assert, describe, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Option, Stream, TestClock } from "effect"
import { ChangeId } from "../src/domain/Domain.js"
import { UsageLimitGate } from "../src/guards/UsageLimitGate.js"

const a = ChangeId.make("001-01_alpha")
const b = ChangeId.make("001-02_beta")
const MINUTE = 60_000

describe("UsageLimitGate", () => {
  it.effect("one gate per loop: a limit one loop met holds no other, nor the loop itself", () =>
    Effect.gen(function*() {
      const gates = yield* UsageLimitGate
      const first = yield* gates.forLoop(a)
      const second = yield* gates.forLoop(b)
      yield* first.report(2 * MINUTE)
      assert.isTrue(Option.isNone(yield* second.heldByOthers))
      assert.isTrue(Option.isNone(yield* first.heldByOthers))
    }).pipe(Effect.provide(UsageLimitGate.layerPerLoop)))

  it.effect("shared: the other loops wait for a limit one met until it lifts; the loop that met it waits on its own", () =>
    Effect.gen(function*() {
      const gates = yield* UsageLimitGate
      const first = yield* gates.forLoop(a)
      const second = yield* gates.forLoop(b)
      assert.isTrue(Option.isNone(yield* second.heldByOthers))
      yield* first.report(2 * MINUTE)
      assert.deepStrictEqual(yield* second.heldByOthers, Option.some({ changeId: a, until: 2 * MINUTE }))
      assert.isTrue(Option.isNone(yield* first.heldByOthers))
      yield* TestClock.adjust(2 * MINUTE - 1)
      assert.isTrue(Option.isSome(yield* second.heldByOthers))
      yield* TestClock.adjust(1)
      assert.isTrue(Option.isNone(yield* second.heldByOthers))
    }).pipe(Effect.provide(UsageLimitGate.layerShared)))

  it.effect("shared: keeps the limit that lasts longest, and tells each one kept", () =>
    Effect.gen(function*() {
      const gates = yield* UsageLimitGate
      const first = yield* gates.forLoop(a)
      const second = yield* gates.forLoop(b)
      const following = yield* Deferred.make<void>()
      const told = yield* Effect.fork(Stream.runCollect(first.holds.pipe(Stream.tap(() => Deferred.succeed(following, undefined)), Stream.take(3))))
      yield* Deferred.await(following)
      yield* first.report(5 * MINUTE)
      yield* second.report(3 * MINUTE)
      // The shorter limit B met lifts before A's: B still waits for A's.
      assert.deepStrictEqual(yield* second.heldByOthers, Option.some({ changeId: a, until: 5 * MINUTE }))
      yield* second.report(7 * MINUTE)
      assert.deepStrictEqual(yield* first.heldByOthers, Option.some({ changeId: b, until: 7 * MINUTE }))
      assert.isTrue(Option.isNone(yield* second.heldByOthers))
      const holds = Chunk.toReadonlyArray(yield* Fiber.join(told)).map(Option.getOrNull)
      assert.deepStrictEqual(holds, [null, { changeId: a, until: 5 * MINUTE }, { changeId: b, until: 7 * MINUTE }])
    }).pipe(Effect.provide(UsageLimitGate.layerShared)))
})
