import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Ref, Stream, TestClock } from "effect"
import { makeSharedViews } from "../src/serve/SharedViews.js"

const POLL = "600 millis"

/** A view whose every read is counted, its snapshot the number of reads so far, held at `frozen` once set. */
const countedView = Effect.gen(function*() {
  const reads = yield* Ref.make(0)
  const frozen = yield* Ref.make<number | null>(null)
  const read = Effect.flatMap(Ref.updateAndGet(reads, (n) => n + 1), (n) => Effect.map(Ref.get(frozen), (f) => ({ n: f ?? n })))
  return { reads, frozen, read }
})

describe("the dashboard's views, one reader for every client (SharedViews)", () => {
  it.scoped("reads a view once a poll however many clients watch it, and sends each the same snapshots", () =>
    Effect.gen(function*() {
      const view = yield* countedView
      const views = yield* makeSharedViews<never>(POLL)
      const clients = yield* Effect.forEach([1, 2, 3, 4, 5], () =>
        Effect.flatMap(views.watch("loops", view.read), (snapshots) => Effect.fork(Stream.runCollect(Stream.take(snapshots, 3)))))
      yield* TestClock.adjust(POLL)
      yield* TestClock.adjust(POLL)
      const seen = yield* Effect.forEach(clients, (client) => Effect.map(Fiber.join(client), Chunk.toReadonlyArray))
      assert.strictEqual(yield* Ref.get(view.reads), 3)
      for (const snapshots of seen) assert.deepStrictEqual(snapshots, ['{"n":1}', '{"n":2}', '{"n":3}'])
    }))

  it.scoped("gives a client that comes later the latest snapshot at once, and sends only what changed", () =>
    Effect.gen(function*() {
      const view = yield* countedView
      const views = yield* makeSharedViews<never>(POLL)
      const first = yield* Effect.fork(Stream.runCollect(Stream.take(yield* views.watch("loops", view.read), 2)))
      yield* TestClock.adjust(POLL)
      yield* Ref.set(view.frozen, 2)
      // Read twice more, both the same as the last: nothing is sent for them.
      yield* TestClock.adjust(POLL)
      yield* TestClock.adjust(POLL)
      const later = yield* Stream.runCollect(Stream.take(yield* views.watch("loops", view.read), 1))
      assert.deepStrictEqual(Chunk.toReadonlyArray(later), ['{"n":2}'])
      assert.deepStrictEqual(Chunk.toReadonlyArray(yield* Fiber.join(first)), ['{"n":1}', '{"n":2}'])
    }))

  it.scoped("keeps each view apart, and reads none once no client watches", () =>
    Effect.gen(function*() {
      const loops = yield* countedView
      const page = yield* countedView
      const views = yield* makeSharedViews<never>(POLL)
      const a = yield* Stream.runCollect(Stream.take(yield* views.watch("loops", loops.read), 1))
      const b = yield* Stream.runCollect(Stream.take(yield* views.watch("loop 001-01", page.read), 1))
      assert.deepStrictEqual([Chunk.toReadonlyArray(a), Chunk.toReadonlyArray(b)], [['{"n":1}'], ['{"n":1}']])
      const before = [yield* Ref.get(loops.reads), yield* Ref.get(page.reads)]
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual([yield* Ref.get(loops.reads), yield* Ref.get(page.reads)], before)
    }))
})
