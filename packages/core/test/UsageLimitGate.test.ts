import { assert, describe, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Stream, TestClock } from "effect"
import { ChangeId } from "../src/domain/Domain.js"
import { UsageLimitGate } from "../src/guards/UsageLimitGate.js"

const a = ChangeId.make("001-01_alpha")
const b = ChangeId.make("001-02_beta")
const MINUTE = 60_000

/** The holds as plain entries, for comparing. */
const entries = <V>(map: ReadonlyMap<string, V>) => [...map.entries()]

describe("UsageLimitGate", () => {
  it.effect("one gate per loop: a limit one loop met holds that loop's agent, and no other loop's", () =>
    Effect.gen(function*() {
      const gates = yield* UsageLimitGate
      const first = yield* gates.forLoop(a)
      const second = yield* gates.forLoop(b)
      yield* first.report("claude", 2 * MINUTE)
      assert.deepStrictEqual(entries(yield* first.held), [["claude", { changeId: a, until: 2 * MINUTE }]])
      assert.deepStrictEqual(entries(yield* second.held), [])
    }).pipe(Effect.provide(UsageLimitGate.layerPerLoop)))

  it.effect("shared: every loop sees a limit one met on an agent until it lifts, and only on that agent", () =>
    Effect.gen(function*() {
      const gates = yield* UsageLimitGate
      const first = yield* gates.forLoop(a)
      const second = yield* gates.forLoop(b)
      assert.deepStrictEqual(entries(yield* second.held), [])
      yield* first.report("claude", 2 * MINUTE)
      assert.deepStrictEqual(entries(yield* second.held), [["claude", { changeId: a, until: 2 * MINUTE }]])
      assert.deepStrictEqual(entries(yield* first.held), [["claude", { changeId: a, until: 2 * MINUTE }]])
      yield* second.report("codex:gpt-5.5", 3 * MINUTE)
      assert.deepStrictEqual(entries(yield* first.held).map(([agent]) => agent), ["claude", "codex:gpt-5.5"])
      yield* TestClock.adjust(2 * MINUTE - 1)
      assert.deepStrictEqual(entries(yield* second.held).map(([agent]) => agent), ["claude", "codex:gpt-5.5"])
      yield* TestClock.adjust(1)
      assert.deepStrictEqual(entries(yield* second.held), [["codex:gpt-5.5", { changeId: b, until: 3 * MINUTE }]])
      yield* TestClock.adjust(MINUTE)
      assert.deepStrictEqual(entries(yield* first.held), [])
    }).pipe(Effect.provide(UsageLimitGate.layerShared)))

  it.effect("shared: keeps the hold of an agent that lasts longest, and tells each one kept", () =>
    Effect.gen(function*() {
      const gates = yield* UsageLimitGate
      const first = yield* gates.forLoop(a)
      const second = yield* gates.forLoop(b)
      const following = yield* Deferred.make<void>()
      const told = yield* Effect.fork(Stream.runCollect(first.holds.pipe(Stream.tap(() => Deferred.succeed(following, undefined)), Stream.take(3))))
      yield* Deferred.await(following)
      yield* first.report("claude", 5 * MINUTE)
      yield* second.report("claude", 3 * MINUTE)
      // The shorter hold B met lifts before A's: claude stays held until A's.
      assert.deepStrictEqual(entries(yield* second.held), [["claude", { changeId: a, until: 5 * MINUTE }]])
      // A hold as long as the one known changes nothing: whoever met it first is named, and nothing is told.
      yield* second.report("claude", 5 * MINUTE)
      assert.deepStrictEqual(entries(yield* second.held), [["claude", { changeId: a, until: 5 * MINUTE }]])
      yield* second.report("claude", 7 * MINUTE)
      assert.deepStrictEqual(entries(yield* first.held), [["claude", { changeId: b, until: 7 * MINUTE }]])
      const holds = Chunk.toReadonlyArray(yield* Fiber.join(told)).map(entries)
      assert.deepStrictEqual(holds, [[], [["claude", { changeId: a, until: 5 * MINUTE }]], [["claude", { changeId: b, until: 7 * MINUTE }]]])
    }).pipe(Effect.provide(UsageLimitGate.layerShared)))

  it.effect("a hold for the rest of the run never lifts", () =>
    Effect.gen(function*() {
      const gate = yield* (yield* UsageLimitGate).forLoop(a)
      yield* gate.report("pi", Number.POSITIVE_INFINITY)
      yield* TestClock.adjust(365 * 24 * 60 * MINUTE)
      assert.deepStrictEqual(entries(yield* gate.held).map(([agent]) => agent), ["pi"])
    }).pipe(Effect.provide(UsageLimitGate.layerPerLoop)))
})
