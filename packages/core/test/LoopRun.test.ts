import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Random, TestClock } from "effect"
import * as fs from "node:fs"
import { ChangeId } from "../src/domain/Domain.js"
import { scriptedRun } from "../src/harness/HarnessService.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { done, runWith } from "./loopFixture.js"
import { lockFileOf, loopOn, processLayer, workspaceWith } from "./manyLoopsFixture.js"

const id = "001-01_alpha"

/** Runs the loop on `id` in a workspace on disk, doing `midway` to the lock during the first iteration. */
const loseLockMidway = (midway: (lock: string) => void) =>
  Effect.gen(function*() {
    const root = workspaceWith([id])
    const loop = loopOn({
      id,
      script: (request) => {
        if (request.iteration === 1) midway(lockFileOf(root, id))
        return scriptedRun(request.iteration === 2 ? done : "step one\n")
      }
    })
    return yield* Effect.gen(function*() {
      const exit = yield* Effect.exit(loop.run)
      const state = Option.getOrNull(yield* Effect.orDie((yield* HistoryStore).readState(ChangeId.make(id))))
      return { exit, state, prompts: loop.prompts, lock: fs.existsSync(lockFileOf(root, id)) ? fs.readFileSync(lockFileOf(root, id), "utf8") : null }
    }).pipe(Effect.provide(processLayer(root)))
  })

const failureOf = <A, E>(exit: Exit.Exit<A, E>) => (Exit.isFailure(exit) ? Option.getOrNull(Cause.failureOption(exit.cause)) : null)

describe("a run's lock and name", () => {
  it.effect("stops before the next iteration once its lock file was removed, recording why", () =>
    Effect.gen(function*() {
      const { exit, state, prompts } = yield* loseLockMidway((lock) => fs.rmSync(lock))
      const error = failureOf(exit)
      assert.deepInclude(error, { _tag: "LockLostError", reason: "Removed" })
      assert.include(error!.message, "the loop on 001-01_alpha lost its lock")
      assert.deepStrictEqual(prompts.map((p) => p.iteration), [1])
      assert.deepInclude(state, { status: "failed", stopReason: "error", stopMessage: error!.message, iteration: 1 })
    }))

  it.effect("stops once another loop took its lock, leaving that loop's lock and the state alone", () =>
    Effect.gen(function*() {
      const other = JSON.stringify({ pid: 4242, host: "elsewhere", startedAt: "2026-11-01T09:00:00.000Z" })
      const { exit, state, prompts, lock } = yield* loseLockMidway((path) => fs.writeFileSync(path, other))
      assert.deepInclude(failureOf(exit), { _tag: "LockLostError", reason: "TakenOver", owner: JSON.parse(other) })
      assert.deepStrictEqual(prompts.map((p) => p.iteration), [1])
      assert.strictEqual(lock, other)
      assert.deepInclude(state, { status: "running", stopReason: null, iteration: 1 })
    }))

  it.effect("takes its run's tag from Random: the same seed and start, the same run id", () =>
    Effect.gen(function*() {
      const runIdWith = (seed: number) =>
        runWith(() => scriptedRun(done), {}, undefined, { setup: TestClock.setTime(Date.UTC(2026, 10, 1, 10)) }).pipe(
          Effect.map(({ records }) => records[0]!.run),
          Effect.withRandom(Random.make(seed))
        )
      const first = yield* runIdWith(42)
      assert.match(first, /^20261101T100000Z-[0-9a-z]{4}$/)
      assert.strictEqual(yield* runIdWith(42), first)
      assert.notStrictEqual(yield* runIdWith(43), first)
    }))
})
