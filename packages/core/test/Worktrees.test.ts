import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Ref } from "effect"
import { type Worktree, WorktreeError, Worktrees } from "../src/git/Worktrees.js"

const root = "/repo"

describe("Worktrees.serialised", () => {
  it.effect("runs the operations of loops that ask at once one at a time", () =>
    Effect.gen(function*() {
      const inFlight = yield* Ref.make(0)
      const most = yield* Ref.make(0)
      const order: Array<string> = []
      const slow = (changeId: string) =>
        Effect.gen(function*() {
          const now = yield* Ref.updateAndGet(inFlight, (n) => n + 1)
          yield* Ref.update(most, (m) => Math.max(m, now))
          order.push(`start ${changeId}`)
          // Gives every other fiber the chance to start an operation meanwhile.
          yield* Effect.yieldNow()
          yield* Effect.yieldNow()
          order.push(`end ${changeId}`)
          yield* Ref.update(inFlight, (n) => n - 1)
          return { path: `${root}/${changeId}`, root: `${root}/${changeId}`, branch: `spool/${changeId}`, created: true } satisfies Worktree
        })
      const worktrees = yield* Worktrees.serialised({
        open: (request) => slow(request.changeId),
        remove: (request) => slow(request.changeId)
      })
      const ids = ["a", "b", "c"]
      yield* Effect.forEach(ids, (changeId) => worktrees.open({ root, changeId, requires: [] }), { concurrency: "unbounded" })
      yield* Effect.forEach(ids, (changeId) => worktrees.remove({ root, changeId }), { concurrency: "unbounded" })
      assert.strictEqual(yield* Ref.get(most), 1)
      for (let i = 0; i < order.length; i += 2) {
        assert.strictEqual(order[i]!.replace("start", "end"), order[i + 1])
      }
    }))

  it.effect("without it the same operations overlap (the probe can tell)", () =>
    Effect.gen(function*() {
      const inFlight = yield* Ref.make(0)
      const most = yield* Ref.make(0)
      const slow = Effect.gen(function*() {
        const now = yield* Ref.updateAndGet(inFlight, (n) => n + 1)
        yield* Ref.update(most, (m) => Math.max(m, now))
        yield* Effect.yieldNow()
        yield* Ref.update(inFlight, (n) => n - 1)
      })
      yield* Effect.forEach([1, 2, 3], () => slow, { concurrency: "unbounded" })
      assert.isAbove(yield* Ref.get(most), 1)
    }))
})

describe("Worktrees.layerTest", () => {
  it.effect("makes a worktree once, reuses it after, and runs prepare only when it makes one", () =>
    Effect.gen(function*() {
      const worktrees = yield* Worktrees
      let prepared = 0
      const prepare = Effect.sync(() => prepared++)
      const first = yield* worktrees.open({ root, changeId: "001-01_a", requires: [], prepare })
      const again = yield* worktrees.open({ root, changeId: "001-01_a", requires: [], prepare })
      assert.isTrue(first.created)
      assert.isFalse(again.created)
      assert.strictEqual(first.branch, "spool/001-01_a")
      assert.strictEqual(first.path, "/repo/.spool/.state/worktrees/001-01_a")
      assert.strictEqual(prepared, 1)
    }).pipe(Effect.provide(Worktrees.layerTest())))

  it.effect("refuses to remove a worktree that does not exist or holds uncommitted work", () =>
    Effect.gen(function*() {
      const worktrees = yield* Worktrees
      const missing = yield* Effect.either(worktrees.remove({ root, changeId: "001-01_a" }))
      assert.isTrue(Either.isLeft(missing) && missing.left instanceof WorktreeError && missing.left.reason === "NotFound")
      yield* worktrees.open({ root, changeId: "001-02_dirty", requires: [] })
      const dirty = yield* Effect.either(worktrees.remove({ root, changeId: "001-02_dirty" }))
      assert.isTrue(Either.isLeft(dirty) && dirty.left instanceof WorktreeError && dirty.left.reason === "Uncommitted")
      assert.match((dirty as Either.Left<WorktreeError, unknown>).left.message, /holds uncommitted work/)
      yield* worktrees.open({ root, changeId: "001-01_a", requires: [] })
      const removed = yield* worktrees.remove({ root, changeId: "001-01_a" })
      assert.strictEqual(removed.branch, "spool/001-01_a")
      assert.isTrue((yield* worktrees.open({ root, changeId: "001-01_a", requires: [] })).created)
    }).pipe(Effect.provide(Worktrees.layerTest({ dirty: ["001-02_dirty"] }))))
})
