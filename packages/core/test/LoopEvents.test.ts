import { assert, describe, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Option, Queue, Stream } from "effect"
import { ChangeId, type LoopState } from "../src/domain/Domain.js"
import { scriptedRun } from "../src/harness/HarnessService.js"
import { LoopEvent, LoopEvents } from "../src/live/LoopEvents.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"
import { done } from "./loopFixture.js"
import { loopOn, processLayer, workspaceWith } from "./manyLoopsFixture.js"

const a = ChangeId.make("001-01_alpha")
const b = ChangeId.make("001-02_beta")

const state = (changeId: string, status: LoopState["status"], iteration: number): LoopState => ({
  changeId,
  run: "r1",
  status,
  iteration,
  minIterations: 1,
  maxIterations: 5,
  startedAt: "2026-11-22T00:00:00.000Z",
  updatedAt: "2026-11-22T00:00:00.000Z",
  pid: 1,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  guards: null
})

/** An event in a few words: `state running 1`, `record 1 continue`. */
const brief = (event: LoopEvent) =>
  event._tag === "StateChanged"
    ? `state ${event.state.status} ${event.state.iteration}`
    : event._tag === "IterationRecorded"
    ? `record ${event.record.iteration} ${event.record.outcome}`
    : `switched ${event.from} ${event.to}`

describe("LoopEvents", () => {
  it.effect("gives each subscriber every event published from its subscription on, in order, and keeps each loop's latest state", () =>
    Effect.gen(function*() {
      const events = yield* LoopEvents
      yield* events.publish(LoopEvent.StateChanged({ changeId: a, state: state(a, "running", 0) }))
      const seen = yield* Effect.scoped(Effect.gen(function*() {
        const queue = yield* events.subscribe
        yield* events.publish(LoopEvent.StateChanged({ changeId: a, state: state(a, "running", 1) }))
        yield* events.publish(LoopEvent.StateChanged({ changeId: b, state: state(b, "running", 1) }))
        yield* events.publish(LoopEvent.StateChanged({ changeId: a, state: state(a, "complete", 1) }))
        return Chunk.toReadonlyArray(yield* Queue.takeAll(queue))
      }))
      assert.deepStrictEqual(seen.map((e) => [e.changeId, brief(e)]), [[a, "state running 1"], [b, "state running 1"], [a, "state complete 1"]])
      const loops = yield* events.loops
      assert.deepStrictEqual([...loops.entries()].map(([id, s]) => [id, s.status, s.iteration]), [[a, "complete", 1], [b, "running", 1]])
    }).pipe(Effect.provide(LoopEvents.layer)))

  it.effect("keeps a record out of the map of states, and tells the map's changes as they come", () =>
    Effect.gen(function*() {
      const events = yield* LoopEvents
      const following = yield* Deferred.make<void>()
      const changes = yield* Effect.fork(Stream.runCollect(events.loopChanges.pipe(Stream.tap(() => Deferred.succeed(following, undefined)), Stream.take(3))))
      yield* Deferred.await(following)
      const record = iterationRecord({ startedAt: "t", durationMs: 1 })
      yield* events.publish(LoopEvent.IterationRecorded({ changeId: a, record }))
      yield* events.publish(LoopEvent.StateChanged({ changeId: a, state: state(a, "running", 1) }))
      yield* events.publish(LoopEvent.StateChanged({ changeId: a, state: state(a, "complete", 1) }))
      const sizes = Chunk.toReadonlyArray(yield* Fiber.join(changes)).map((map) => [...map.values()].map((s) => s.status))
      assert.deepStrictEqual(sizes, [[], ["running"], ["complete"]])
    }).pipe(Effect.provide(LoopEvents.layer)))

  it.effect("two loops through layers: a subscriber sees each loop's states in order, from running to complete, and its records", () =>
    Effect.gen(function*() {
      const root = workspaceWith([a, b])
      const first = loopOn({ id: a, script: (request) => scriptedRun(request.iteration === 2 ? done : "step\n") })
      const second = loopOn({ id: b, script: () => scriptedRun(done) })
      const seen = yield* Effect.scoped(Effect.gen(function*() {
        const events = yield* LoopEvents
        const queue = yield* events.subscribe
        const results = yield* Effect.forEach([first, second], (loop) => loop.run, { concurrency: 2 })
        return { results, events: Chunk.toReadonlyArray(yield* Queue.takeAll(queue)), loops: yield* events.loops }
      })).pipe(Effect.provide(processLayer(root)))
      const of = (id: ChangeId) => seen.events.filter((e) => e.changeId === id).map(brief)
      assert.deepStrictEqual(of(a), [
        "state running 0",
        "state running 1",
        "record 1 continue",
        "state running 2",
        "record 2 complete",
        "state complete 2"
      ])
      assert.deepStrictEqual(of(b), ["state running 0", "state running 1", "record 1 complete", "state complete 1"])
      // The events carry the run's own records and states.
      const runs = new Set(seen.events.map((e) => (e._tag === "StateChanged" ? e.state.run : e._tag === "IterationRecorded" ? e.record.run : e.run)))
      assert.deepStrictEqual([...runs].sort(), seen.results.map((r) => r.run).sort())
      assert.deepStrictEqual([...seen.loops.keys()].sort(), [a, b])
      assert.deepStrictEqual([...seen.loops.values()].map((s) => s.status), ["complete", "complete"])
    }))
  it.effect("a worktree loop's published states, from the first, name its branch and its worktree, as its state file does", () =>
    Effect.gen(function*() {
      const root = workspaceWith([a, b])
      const worktree = { branch: `spool/${a}`, root: `${root}/.spool/.state/worktrees/${a}` }
      const inWorktree = loopOn({ id: a, script: () => scriptedRun(done), worktree })
      const inMain = loopOn({ id: b, script: () => scriptedRun(done) })
      const { states, files } = yield* Effect.scoped(Effect.gen(function*() {
        const queue = yield* (yield* LoopEvents).subscribe
        yield* Effect.forEach([inWorktree, inMain], (loop) => loop.run, { concurrency: 2 })
        const events = Chunk.toReadonlyArray(yield* Queue.takeAll(queue))
        const store = yield* HistoryStore
        return {
          states: events.flatMap((e) => (e._tag === "StateChanged" ? [e.state] : [])),
          files: [Option.getOrNull(yield* store.readState(a)), Option.getOrNull(yield* store.readState(b))]
        }
      })).pipe(Effect.provide(processLayer(root)))
      const where = (s: LoopState | null) => [s?.changeId, s?.status, s?.branch, s?.worktree]
      assert.deepStrictEqual(states.filter((s) => s.changeId === a).map(where), [
        [a, "running", worktree.branch, worktree.root],
        [a, "running", worktree.branch, worktree.root],
        [a, "complete", worktree.branch, worktree.root]
      ])
      // A loop in the main work tree names neither.
      assert.isTrue(states.filter((s) => s.changeId === b).every((s) => !("branch" in s) && !("worktree" in s)))
      assert.deepStrictEqual(files.map(where), [[a, "complete", worktree.branch, worktree.root], [b, "complete", undefined, undefined]])
    }))
})
