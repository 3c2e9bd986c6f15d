import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Stream, TestClock } from "effect"
import { HarnessEvent, outputOf, scriptedRun } from "../src/harness/HarnessService.js"
import { beforeIteration, deadlineCame } from "../src/loop/Deadline.js"
import { runWith, untilPrinted } from "./loopFixture.js"

const T0 = Date.parse("2026-11-27T10:00:00.000Z")

describe("the deadline's decision", () => {
  it("starts the first iteration, with nothing to go by", () => {
    assert.deepStrictEqual(beforeIteration(T0 + 1, T0, []), { _tag: "Start" })
  })

  it("starts an iteration the longest so far would end in time, to the millisecond", () => {
    assert.deepStrictEqual(beforeIteration(T0 + 60_000, T0, [20_000, 60_000, 5_000]), { _tag: "Start" })
  })

  it("starts none that the longest so far says would end after it", () => {
    const decision = beforeIteration(T0 + 59_999, T0, [20_000, 60_000, 5_000])
    assert.deepStrictEqual(decision, {
      _tag: "Stop",
      message: "stopped: --deadline 2026-11-27T10:00:59Z would come before another iteration ended (the longest so far took 1m00s, 1m00s are left); " +
        "not done; continue in a later job with --resume"
    })
  })

  it("starts none once it has come", () => {
    assert.deepStrictEqual(beforeIteration(T0, T0, []), {
      _tag: "Stop",
      message: "stopped: --deadline 2026-11-27T10:00:00Z has come; not done; continue in a later job with --resume"
    })
  })

  it("words the end of a run whose iteration it stopped", () => {
    assert.strictEqual(deadlineCame(T0), "stopped: --deadline 2026-11-27T10:00:00Z came during the iteration; not done; continue in a later job with --resume")
  })
})

/** An agent whose iteration lasts `minutes` of the test clock, then prints `text`. */
const lasting = (minutes: number, text = "working\n") =>
  Stream.concat(
    Stream.fromEffect(Effect.as(Effect.sleep(`${minutes} minutes`), outputOf("stdout", text, true))),
    Stream.make(HarnessEvent.Exited({ exitCode: 0, signal: null }))
  )

describe("a loop with a deadline", () => {
  it.effect("starts no iteration its longest so far would not end before the deadline, ending as deadline", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const { exit, prompts, state, output } = yield* runWith(() => lasting(20), { maxIterations: 10, inactivityTimeoutMs: 3_600_000 }, undefined, {
        deadline: T0 + 50 * 60_000,
        during: (printed) =>
          Effect.gen(function*() {
            for (let i = 1; i <= 2; i++) {
              yield* untilPrinted(printed, `iteration ${i}/10`)
              yield* TestClock.adjust("20 minutes")
            }
          })
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["deadline", "deadline", 2] as const))
      assert.deepStrictEqual(prompts.map((p) => p.iteration), [1, 2])
      assert.deepStrictEqual([state?.status, state?.stopReason], ["deadline", "deadline"])
      assert.include(output, "would come before another iteration ended (the longest so far took 20m00s, 10m00s are left)")
    }))

  it.effect("stops the iteration running when it comes, records it as stopped, and ends as deadline", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const { exit, records } = yield* runWith(() => lasting(60, "done\n<promise>COMPLETE</promise>\n"), { inactivityTimeoutMs: 7_200_000 }, undefined, {
        deadline: T0 + 30 * 60_000,
        during: (printed) => Effect.zipRight(untilPrinted(printed, "iteration 1/5"), TestClock.adjust("30 minutes"))
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations, r.message] as const), Exit.succeed(["deadline", 1, deadlineCame(T0 + 30 * 60_000)] as const))
      assert.deepStrictEqual(records.map((r) => r.outcome), ["stopped"])
    }))

  it.effect("leaves a run that completes in time as complete", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const { exit } = yield* runWith(() => scriptedRun("<promise>COMPLETE</promise>\n"), {}, undefined, { deadline: T0 + 60_000 })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
    }))
})
