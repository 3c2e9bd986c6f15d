import { assert, describe, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, type Layer, Option, Ref, Stream, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ChangeId } from "../src/domain/Domain.js"
import { HarnessEvent, scriptedRun } from "../src/harness/HarnessService.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import type { LoopResult } from "../src/loop/LoopResult.js"
import { UsageLimitGate } from "../src/guards/UsageLimitGate.js"
import { done, untilPrinted } from "./loopFixture.js"
import { lockFileOf, loopOn, processLayer, workspaceWith } from "./manyLoopsFixture.js"

const ids = ["001-01_alpha", "001-02_beta", "001-03_gamma"] as const

/** Resolves once `count` loops have arrived: every loop that waits on it runs beside the others. */
const makeMeeting = (count: number) =>
  Effect.gen(function*() {
    const arrived = yield* Ref.make(0)
    const all = yield* Deferred.make<void>()
    const arrive = Effect.zipRight(
      Effect.flatMap(Ref.updateAndGet(arrived, (n) => n + 1), (n) => (n === count ? Deferred.succeed(all, undefined) : Effect.void)),
      Deferred.await(all)
    )
    return { arrive, all: Deferred.await(all) }
  })

const stateOf = (id: string) => Effect.map(Effect.flatMap(HistoryStore, (store) => Effect.orDie(store.readState(ChangeId.make(id)))), Option.getOrNull)
const recordsOf = (id: string) => Effect.map(Effect.flatMap(HistoryStore, (store) => Effect.orDie(store.recent(ChangeId.make(id), 10))), (tail) => tail.records)

describe("three loops in one process", () => {
  it.effect("run side by side under one scope, each to its own end, each reporter telling only its own loop", () =>
    Effect.gen(function*() {
      const root = workspaceWith(ids)
      const meeting = yield* makeMeeting(3)
      const locksWhileAllRun: Array<boolean> = []
      const loops = ids.map((id) =>
        loopOn({
          id,
          script: (request) =>
            request.iteration === 1
              ? Stream.fromEffect(Effect.zipRight(meeting.arrive, Effect.sync(() => locksWhileAllRun.push(ids.every((other) => fs.existsSync(lockFileOf(root, other)))))))
                .pipe(Stream.drain, Stream.concat(Stream.fromIterable(scriptedRun(`working on ${id}\n`))))
              : scriptedRun(`${id} is done\n<promise>COMPLETE</promise>\n`)
        })
      )
      const seen = yield* Effect.gen(function*() {
        const results = yield* Effect.forEach(loops, (loop) => loop.run, { concurrency: 3 })
        return { results, states: yield* Effect.forEach(ids, stateOf), records: yield* Effect.forEach(ids, recordsOf) }
      }).pipe(Effect.provide(processLayer(root)))

      assert.deepStrictEqual(
        seen.results.map((r: LoopResult) => [r.status, r.reason, r.iterations, r.message]),
        ids.map(() => ["complete", "complete", 2, "complete: the promise was accepted at iteration 2"])
      )
      assert.strictEqual(new Set(seen.results.map((r) => r.run)).size, 3)
      // All three held their locks while all three ran.
      assert.deepStrictEqual(locksWhileAllRun, [true, true, true])
      for (const [i, id] of ids.entries()) {
        const output = loops[i]!.output()
        assert.include(output, `working on ${id}\n`)
        assert.include(output, `${id} is done\n`)
        assert.include(output, "complete: the promise was accepted at iteration 2\n")
        for (const other of ids.filter((o) => o !== id)) assert.notInclude(output, other)
        assert.deepStrictEqual(loops[i]!.prompts.map((p): [string, number] => [p.changeId, p.iteration]), [[id, 1], [id, 2]])
        assert.include(loops[i]!.prompts[0]!.prompt, `Build ${id}.`)
        assert.isFalse(fs.existsSync(lockFileOf(root, id)))
      }
      assert.deepStrictEqual(seen.states.map((s) => [s?.changeId, s?.status, s?.run]), ids.map((id, i) => [id, "complete", seen.results[i]!.run]))
      assert.deepStrictEqual(seen.records.map((rs) => rs.map((r) => r.outcome)), ids.map(() => ["continue", "complete"]))
    }))

  it.effect("stop together when the whole is interrupted: every lock released, every state interrupted", () =>
    Effect.gen(function*() {
      const root = workspaceWith(ids)
      const meeting = yield* makeMeeting(3)
      const loops = ids.map((id) =>
        loopOn({
          id,
          script: () =>
            Stream.concat(
              Stream.make(HarnessEvent.AgentText({ text: `${id} works\n` })),
              Stream.fromEffect(meeting.arrive).pipe(Stream.drain, Stream.concat(Stream.never))
            )
        })
      )
      const exits: Array<readonly [string, Exit.Exit<LoopResult, unknown>]> = []
      const seen = yield* Effect.gen(function*() {
        const all = yield* Effect.fork(Effect.forEach(
          loops.map((loop, i) => loop.run.pipe(Effect.onExit((exit) => Effect.sync(() => exits.push([ids[i]!, exit]))))),
          (run) => run,
          { concurrency: 3, discard: true }
        ))
        yield* meeting.all
        const locksBefore = ids.map((id) => fs.existsSync(lockFileOf(root, id)))
        const whole = yield* Fiber.interrupt(all)
        return { whole, locksBefore, states: yield* Effect.forEach(ids, stateOf), records: yield* Effect.forEach(ids, recordsOf) }
      }).pipe(Effect.provide(processLayer(root)))

      assert.isTrue(Exit.isInterrupted(seen.whole))
      assert.deepStrictEqual(seen.locksBefore, [true, true, true])
      assert.deepStrictEqual(exits.map(([id]) => id).sort(), [...ids])
      for (const [, exit] of exits) assert.isTrue(Exit.isInterrupted(exit))
      assert.deepStrictEqual(ids.map((id) => fs.existsSync(lockFileOf(root, id))), [false, false, false])
      assert.deepStrictEqual(seen.states.map((s): Array<string | null | undefined> => [s?.status, s?.stopReason]), ids.map(() => ["interrupted", "interrupted"]))
      assert.deepStrictEqual(seen.records.map((rs) => rs.map((r) => [r.iteration, r.outcome])), ids.map(() => [[1, "interrupted"]]))
    }))
})

describe("a usage limit several loops share", () => {
  const A = "001-01_alpha"
  const B = "001-02_beta"

  /** Waits, in real time, until `count` fibers sleep until `wakeAt` on the test clock. */
  const untilSleeping = (count: number, wakeAt: number) =>
    Effect.gen(function*() {
      for (let i = 0; i < 2000; i++) {
        if (Chunk.filter(yield* TestClock.sleeps(), (t) => t === wakeAt).length >= count) return
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      }
      return yield* Effect.dieMessage(`never ${count} sleeping until ${wakeAt}`)
    })

  /**
   * Loop A meets a limit lifting in two minutes; loop B then ends its first iteration and goes on
   * to its second. What both did, by the gate given, once the two minutes have passed.
   */
  const limitMetByA = (gate: Layer.Layer<UsageLimitGate>, bWaits: boolean) =>
    Effect.gen(function*() {
      const root = workspaceWith([A, B])
      const aWaits = yield* Deferred.make<void>()
      let aRuns = 0
      const a = loopOn({
        id: A,
        script: () =>
          ++aRuns === 1
            ? [HarnessEvent.Limited({ message: "429 rate limited", resetAt: null, retryAfterMs: 120_000, resets: true }), HarnessEvent.Exited({ exitCode: 1, signal: null })]
            : scriptedRun(done)
      })
      /** B's state as its second iteration's agent starts. */
      let bState: { readonly status: string; readonly resumeAt: string | null } | null = null
      const b = loopOn({
        id: B,
        script: (request) => {
          if (request.iteration === 1) {
            return Stream.fromEffect(Deferred.await(aWaits)).pipe(Stream.drain, Stream.concat(Stream.fromIterable(scriptedRun("step one\n"))))
          }
          bState = JSON.parse(fs.readFileSync(path.join(path.dirname(lockFileOf(root, B)), "state.json"), "utf8"))
          return scriptedRun(done)
        }
      })
      return yield* Effect.gen(function*() {
        const driver = Effect.gen(function*() {
          yield* untilPrinted(a.output, "waiting for the usage limit until")
          yield* Deferred.succeed(aWaits, undefined)
          // The clock moves once B waits with A, or else has run to its end.
          if (!bWaits) yield* untilPrinted(b.output, "complete: the promise was accepted")
          yield* untilSleeping(bWaits ? 2 : 1, 120_000)
          yield* TestClock.adjust("2 minutes")
        })
        const [results] = yield* Effect.all([Effect.forEach([a, b], (loop) => loop.run, { concurrency: 2 }), driver], { concurrency: 2 })
        return { results, aRecords: yield* recordsOf(A), bRecords: yield* recordsOf(B), aOutput: a.output(), bOutput: b.output(), bPrompts: b.prompts, bState }
      }).pipe(Effect.provide(processLayer(root, gate)))
    })

  it.effect("shared: a loop about to start an iteration waits until the limit another loop met lifts, instead of running into it", () =>
    Effect.gen(function*() {
      const seen = yield* limitMetByA(UsageLimitGate.layerShared, true)
      assert.deepStrictEqual(seen.results.map((r) => [r.status, r.iterations]), [["complete", 1], ["complete", 2]])
      assert.deepStrictEqual(seen.aRecords.map((r) => [r.iteration, r.outcome, r.startedAt]), [
        [1, "limited", "1970-01-01T00:00:00.000Z"],
        [1, "complete", "1970-01-01T00:02:00.000Z"]
      ])
      // B never ran its agent into the limit: its second iteration started when A's limit lifted.
      assert.deepStrictEqual(seen.bRecords.map((r) => [r.iteration, r.outcome, r.startedAt]), [
        [1, "continue", "1970-01-01T00:00:00.000Z"],
        [2, "complete", "1970-01-01T00:02:00.000Z"]
      ])
      assert.deepStrictEqual(seen.bPrompts.map((p) => p.iteration), [1, 2])
      assert.include(seen.bOutput, "waiting for the usage limit until 1970-01-01T00:02:00Z (another loop's limit); Ctrl-C stops the loop\n")
      // Once the wait is over, the state says so before the agent runs again.
      assert.deepInclude(seen.bState, { status: "running", resumeAt: null })
    }))

  it.effect("shared, with a fallback: a loop about to run the agent another loop found limited runs its fallback at once", () =>
    Effect.gen(function*() {
      const root = workspaceWith([A, B])
      const aSwitched = yield* Deferred.make<void>()
      let aRuns = 0
      const a = loopOn({
        id: A,
        script: () =>
          ++aRuns === 1
            ? [HarnessEvent.Limited({ message: "usage limit", resetAt: 3_600_000, retryAfterMs: null, resets: true }), HarnessEvent.Exited({ exitCode: 1, signal: null })]
            : scriptedRun(done),
        fallback: () => scriptedRun(done)
      })
      const b = loopOn({
        id: B,
        script: (request) =>
          request.iteration === 1
            ? Stream.fromEffect(Deferred.await(aSwitched)).pipe(Stream.drain, Stream.concat(Stream.fromIterable(scriptedRun("step one\n"))))
            : scriptedRun(done),
        fallback: () => scriptedRun(done)
      })
      const seen = yield* Effect.gen(function*() {
        const driver = Effect.zipRight(untilPrinted(a.output, "switching to codex"), Deferred.succeed(aSwitched, undefined))
        const [results] = yield* Effect.all([Effect.forEach([a, b], (loop) => loop.run, { concurrency: 2 }), driver], { concurrency: 2 })
        return { results, aRecords: yield* recordsOf(A), bRecords: yield* recordsOf(B) }
      }).pipe(Effect.provide(processLayer(root, UsageLimitGate.layerShared)))
      assert.deepStrictEqual(seen.aRecords.map((r) => [r.iteration, r.agent, r.outcome]), [[1, "test", "limited"], [1, "codex", "complete"]])
      // B's second iteration never ran the agent A found limited.
      assert.deepStrictEqual(seen.bRecords.map((r) => [r.iteration, r.agent, r.outcome]), [[1, "test", "continue"], [2, "codex", "complete"]])
      assert.include(b.output(), "switching to codex: test is held by its usage limit until 1970-01-01T01:00:00Z\n")
      assert.notInclude(b.output(), "waiting for")
      assert.deepStrictEqual(seen.results.map((r) => r.status), ["complete", "complete"])
    }))

  it.effect("one gate per loop (the default): the other loop runs on, as loops always have", () =>
    Effect.gen(function*() {
      // Only A sleeps: B's second iteration runs at once and completes before A's limit lifts.
      const seen = yield* limitMetByA(UsageLimitGate.layerPerLoop, false)
      assert.deepStrictEqual(seen.results.map((r) => [r.status, r.iterations]), [["complete", 1], ["complete", 2]])
      assert.deepStrictEqual(seen.bRecords.map((r) => [r.iteration, r.outcome, r.startedAt]), [
        [1, "continue", "1970-01-01T00:00:00.000Z"],
        [2, "complete", "1970-01-01T00:00:00.000Z"]
      ])
      assert.notInclude(seen.bOutput, "waiting for the usage limit")
      assert.deepStrictEqual(seen.aRecords.map((r) => [r.iteration, r.outcome, r.startedAt]), [
        [1, "limited", "1970-01-01T00:00:00.000Z"],
        [1, "complete", "1970-01-01T00:02:00.000Z"]
      ])
    }))

  it.effect("shared: a loop whose caps do not reach the end of another loop's limit stops at once, saying whose limit and when to run again", () =>
    Effect.gen(function*() {
      const root = workspaceWith([A, B])
      const aWaits = yield* Deferred.make<void>()
      let aRuns = 0
      const a = loopOn({
        id: A,
        script: () =>
          ++aRuns === 1
            ? [HarnessEvent.Limited({ message: "429 rate limited", resetAt: null, retryAfterMs: 2 * 3_600_000, resets: true }), HarnessEvent.Exited({ exitCode: 1, signal: null })]
            : scriptedRun(done)
      })
      const b = loopOn({
        id: B,
        options: { maxLimitWaitMs: 3_600_000 },
        script: () => Stream.fromEffect(Deferred.await(aWaits)).pipe(Stream.drain, Stream.concat(Stream.fromIterable(scriptedRun("step one\n"))))
      })
      const seen = yield* Effect.gen(function*() {
        const driver = Effect.gen(function*() {
          yield* untilPrinted(a.output, "waiting for the usage limit until")
          yield* Deferred.succeed(aWaits, undefined)
          yield* untilPrinted(b.output, "stopped:")
          yield* untilSleeping(1, 2 * 3_600_000)
          yield* TestClock.adjust("2 hours")
        })
        const [results] = yield* Effect.all([Effect.forEach([a, b], (loop) => loop.run, { concurrency: 2 }), driver], { concurrency: 2 })
        return { results, bState: yield* stateOf(B), bRecords: yield* recordsOf(B) }
      }).pipe(Effect.provide(processLayer(root, UsageLimitGate.layerShared)))
      const message = "stopped: the limit lifts at 1970-01-01T02:00:00Z, past --max-limit-wait (1h00m) (the usage limit the loop on 001-01_alpha met); " +
        "run spool again after 1970-01-01T02:00:00Z"
      assert.deepStrictEqual(seen.results.map((r) => [r.status, r.iterations, r.resumeAt]), [["complete", 1, null], ["usage-limit", 1, 2 * 3_600_000]])
      assert.strictEqual(seen.results[1]!.message, message)
      assert.include(b.output(), `${message}\n`)
      assert.deepInclude(seen.bState, { status: "usage-limit", stopReason: "usage-limit", iteration: 1, resumeAt: "1970-01-01T02:00:00.000Z" })
      assert.deepStrictEqual(seen.bRecords.map((r) => r.outcome), ["continue"])
    }))
})
