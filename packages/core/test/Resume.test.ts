import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Ref } from "effect"
import type { LoopState } from "../src/domain/Domain.js"
import { initialCounters } from "../src/guards/Guards.js"
import { HarnessEvent, outputOf, scriptedRun } from "../src/harness/HarnessService.js"
import { planResume } from "../src/loop/Resume.js"
import { Checkpoint } from "../src/remote/Checkpoint.js"
import { LockLostError } from "../src/state/LoopLock.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"
import { changeId, done, runWith, sharedHistory } from "./loopFixture.js"

const state = (overrides: Partial<LoopState> = {}): LoopState => ({
  changeId,
  run: "20261127T100000Z-abcd",
  status: "interrupted",
  iteration: 4,
  minIterations: 1,
  maxIterations: 10,
  startedAt: "2026-11-27T10:00:00.000Z",
  updatedAt: "2026-11-27T10:30:00.000Z",
  pid: 7,
  stopReason: "interrupted",
  stopMessage: null,
  resumeAt: null,
  guards: {
    maxCostUsd: 5,
    maxTokens: null,
    maxDurationMs: null,
    stallIterations: 5,
    maxConsecutiveFailures: 5,
    maxLimitWaitMs: 1000,
    costUsd: 1.25,
    tokens: 4200,
    stalledIterations: 2,
    consecutiveFailures: 1
  },
  elapsedMs: 600_000,
  failureStreak: ["print-1"],
  ...overrides
})

const record = (run: string, iteration: number) => iterationRecord({ run, iteration, startedAt: "2026-11-27T10:20:00.000Z", durationMs: 1000 })

describe("the resume plan", () => {
  it("starts a new run when the change has none", () => {
    assert.deepStrictEqual(planResume(null, null), { _tag: "Fresh" })
  })

  it("runs nothing when the last run completed, naming it and its last iteration", () => {
    const s = state({ status: "complete" })
    assert.deepStrictEqual(planResume(s, record(s.run, 6)), { _tag: "Done", run: s.run, iteration: 6 })
  })

  it("goes on after the last recorded iteration, so one cut short before its record runs again", () => {
    const s = state({ iteration: 4 })
    const plan = planResume(s, record(s.run, 3))
    assert.deepStrictEqual(plan, {
      _tag: "Continue",
      run: s.run,
      startedAt: s.startedAt,
      iteration: 4,
      elapsedMs: 600_000,
      counters: { spend: { costUsd: 1.25, tokens: 4200 }, stalledIterations: 2, consecutiveFailures: 1, failureFingerprints: ["print-1"] }
    })
  })

  it("numbers from 1 when the newest record belongs to an earlier run", () => {
    const plan = planResume(state(), record("20261126T090000Z-zzzz", 9))
    assert.strictEqual(plan._tag === "Continue" ? plan.iteration : null, 1)
  })

  it("takes the run's time from its start to its last update when the state did not keep it", () => {
    const { elapsedMs: _, ...old } = state()
    const plan = planResume(old, null)
    assert.strictEqual(plan._tag === "Continue" ? plan.elapsedMs : null, 30 * 60_000)
  })

  it("starts the counters afresh when the state has none, and an empty streak when it kept none", () => {
    const none = planResume(state({ guards: null }), null)
    assert.deepStrictEqual(none._tag === "Continue" ? none.counters : null, initialCounters)
    const { failureStreak: _, ...old } = state()
    const plan = planResume(old, null)
    assert.deepStrictEqual(plan._tag === "Continue" ? plan.counters.failureFingerprints : null, [])
  })
})

const costs = (cost: number) =>
  HarnessEvent.Usage({ usage: { inputTokens: 100, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost } })

describe("a resumed loop", () => {
  it.effect("goes on numbering the same run's iterations, counting --max-iterations over the whole run", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      const first = yield* runWith(() => scriptedRun("working\n"), { maxIterations: 2 }, undefined, { history })
      assert.deepStrictEqual(Exit.map(first.exit, (r) => r.status), Exit.succeed("max-iterations" as const))
      const second = yield* runWith((r) => scriptedRun(r.iteration === 3 ? done : "working\n"), { maxIterations: 6 }, undefined, { history, resume: true })
      assert.deepStrictEqual(Exit.map(second.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 3] as const))
      assert.deepStrictEqual(second.prompts.map((p) => p.iteration), [3])
      assert.deepStrictEqual(second.records.map((r) => r.iteration), [1, 2, 3])
      assert.strictEqual(new Set(second.records.map((r) => r.run)).size, 1)
      assert.strictEqual(second.state?.startedAt, first.state?.startedAt)
      assert.include(second.output, `resuming run ${first.state?.run} at iteration 3`)
    }))

  it.effect("counts the spend of the earlier sittings toward --max-cost", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      const agent = () => [costs(0.4), ...scriptedRun("working\n")]
      yield* runWith(agent, { maxIterations: 2, maxCostUsd: 1 }, undefined, { history })
      const second = yield* runWith(agent, { maxIterations: 10, maxCostUsd: 1 }, undefined, { history, resume: true })
      assert.deepStrictEqual(Exit.map(second.exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-cost", 3] as const))
      assert.deepStrictEqual(second.prompts.map((p) => p.iteration), [3])
      assert.include(second.output, "stopped: --max-cost $1.00 reached ($1.20 spent")
    }))

  it.effect("trips the failure breaker on a streak begun before the restart", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      const failing = () => [outputOf("stderr", "Error: the API key is invalid\n", true), HarnessEvent.Exited({ exitCode: 1, signal: null })]
      yield* runWith(failing, { maxIterations: 2, maxConsecutiveFailures: 3 }, undefined, { history })
      const second = yield* runWith(failing, { maxIterations: 10, maxConsecutiveFailures: 3 }, undefined, { history, resume: true })
      assert.isTrue(Exit.isFailure(second.exit))
      assert.deepStrictEqual(second.prompts.map((p) => p.iteration), [3])
      assert.include(second.state?.stopMessage ?? "", "the same error 3 times in a row")
    }))

  it.effect("counts the earlier sittings' time toward --max-duration, and runs nothing once it is spent", () =>
    Effect.gen(function*() {
      const { history, store } = yield* sharedHistory
      yield* runWith(() => scriptedRun("working\n"), { maxIterations: 1 }, undefined, { history })
      const earlier = yield* store.readState(changeId)
      if (earlier._tag === "None") return assert.fail("the first run wrote no state")
      yield* store.writeState(changeId, { ...earlier.value, elapsedMs: 2 * 3_600_000 })
      const second = yield* runWith(() => scriptedRun(done), { maxIterations: 5, maxDurationMs: 3_600_000 }, undefined, { history, resume: true })
      assert.deepStrictEqual(Exit.map(second.exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-duration", 1] as const))
      assert.deepStrictEqual(second.prompts, [])
    }))

  it.effect("runs nothing and writes nothing when the last run completed", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      const first = yield* runWith(() => scriptedRun(done), {}, undefined, { history })
      const second = yield* runWith(() => scriptedRun(done), {}, undefined, { history, resume: true })
      assert.deepStrictEqual(Exit.map(second.exit, (r) => [r.status, r.iterations, r.run] as const), Exit.succeed(["complete", 1, first.state!.run] as const))
      assert.deepStrictEqual(second.prompts, [])
      assert.deepStrictEqual(second.state, first.state)
      assert.include(second.output, "nothing to resume")
    }))

  it.effect("ends at once when the earlier sittings used every iteration --max-iterations allows", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      yield* runWith(() => scriptedRun("working\n"), { maxIterations: 2 }, undefined, { history })
      const second = yield* runWith(() => scriptedRun(done), { maxIterations: 2 }, undefined, { history, resume: true })
      assert.deepStrictEqual(Exit.map(second.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["max-iterations", 2] as const))
      assert.deepStrictEqual(second.prompts, [])
    }))

  it.effect("starts a new run when there is none to resume, and without --resume starts a new one anyway", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      const first = yield* runWith((r) => scriptedRun(r.iteration === 2 ? done : "x\n"), {}, undefined, { history, resume: true })
      assert.deepStrictEqual(first.records.map((r) => r.iteration), [1, 2])
      const second = yield* runWith(() => scriptedRun(done), {}, undefined, { history })
      assert.deepStrictEqual(second.prompts.map((p) => p.iteration), [1])
      assert.notStrictEqual(second.state?.run, first.state?.run)
    }))
})

describe("a loop's checkpoints", () => {
  const counting = (fail: (n: number) => boolean) =>
    Effect.map(Ref.make(0), (calls) => ({
      calls,
      layer: Layer.succeed(Checkpoint, {
        save: (id) =>
          Effect.flatMap(Ref.updateAndGet(calls, (n) => n + 1), (n) =>
            fail(n) ? Effect.fail(new LockLostError({ changeId: id, path: "refs/spool/lease/x", reason: "TakenOver", owner: null, remote: "origin" })) : Effect.void)
      })
    }))

  it.effect("keep the work after each iteration that is followed by another, and once at the end", () =>
    Effect.gen(function*() {
      const { calls, layer } = yield* counting(() => false)
      const { exit, records } = yield* runWith((r) => scriptedRun(r.iteration === 3 ? done : "x\n"), {}, undefined, { checkpoint: layer })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
      assert.strictEqual(records.length, 3)
      assert.strictEqual(yield* Ref.get(calls), 3)
    }))

  it.effect("stop the loop when the change is no longer its own, leaving its state to the new holder", () =>
    Effect.gen(function*() {
      const { calls, layer } = yield* counting((n) => n === 2)
      const { exit, prompts, state } = yield* runWith(() => scriptedRun("x\n"), {}, undefined, { checkpoint: layer })
      assert.isTrue(Exit.isFailure(exit) && String(exit.cause).includes("LockLostError"))
      assert.deepStrictEqual(prompts.map((p) => p.iteration), [1, 2])
      assert.strictEqual(yield* Ref.get(calls), 2)
      assert.strictEqual(state?.status, "running")
    }))
})
