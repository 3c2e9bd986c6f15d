import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Stream, TestClock } from "effect"
import { HarnessEvent, scriptedRun } from "../src/harness/HarnessService.js"
import { done, runWith, sharedHistory } from "./loopFixture.js"

/** The agent met a usage limit that lifts at `resetAt` (epoch ms). */
const limitedUntil = (resetAt: number) => [
  HarnessEvent.Limited({ message: `usage limit reached, resets at ${resetAt}`, resetAt, retryAfterMs: null, resets: true }),
  HarnessEvent.Exited({ exitCode: 1, signal: null })
]

/** Each record as `[iteration, agent, outcome]`. */
const ran = (records: ReadonlyArray<{ readonly iteration: number; readonly agent?: string; readonly outcome: string }>) =>
  records.map((r) => [r.iteration, r.agent, r.outcome])

describe("a loop with fallback agents", () => {
  it.effect("runs the next agent at once when its agent meets a limit, and goes back to it once the reset has passed", () =>
    Effect.gen(function*() {
      let calls = 0
      const seen = yield* runWith(
        () => (++calls === 1 ? limitedUntil(20_000) : scriptedRun(done)),
        { maxIterations: 5 },
        undefined,
        {
          fallbacks: [{
            id: "codex:gpt-5.5",
            // The fallback's iteration takes half a minute: the first agent's reset passes meanwhile.
            script: () => Stream.concat(Stream.fromEffect(TestClock.adjust("30 seconds")).pipe(Stream.drain), Stream.fromIterable(scriptedRun("step one\n")))
          }]
        }
      )
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 2] as const))
      assert.deepStrictEqual(ran(seen.records), [[1, "test", "limited"], [1, "codex:gpt-5.5", "continue"], [2, "test", "complete"]])
      assert.deepStrictEqual(seen.records.map((r) => [r.harness, r.model]), [["test", null], ["codex", "gpt-5.5"], ["test", null]])
      assert.include(seen.output, "switching to codex:gpt-5.5: test is held by its usage limit until 1970-01-01T00:00:20Z\n")
      assert.include(seen.output, "back to test: its usage limit has lifted\n")
      assert.notInclude(seen.output, "waiting for")
      assert.deepStrictEqual(seen.state?.agents?.map((a) => [a.agent, a.iterations, a.limitedUntil]), [["test", 2, null], ["codex:gpt-5.5", 1, null]])
      assert.strictEqual(seen.state?.agent, "test")
    }))

  it.effect("waits only when every agent is held, for the first to be free, and goes on with it", () =>
    Effect.gen(function*() {
      let calls = 0
      let codexCalls = 0
      const hour = 3_600_000
      const seen = yield* runWith(
        () => (++calls === 1 ? limitedUntil(hour) : scriptedRun(done)),
        { maxIterations: 5, maxLimitWaitMs: 2 * hour },
        undefined,
        {
          fallbacks: [{ id: "codex", script: () => (++codexCalls === 1 ? limitedUntil(10_000) : scriptedRun(done)) }],
          during: (output) =>
            Effect.gen(function*() {
              for (let i = 0; i < 2000 && !output().includes("waiting for"); i++) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
              yield* TestClock.adjust("70 seconds")
            })
        }
      )
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => r.status), Exit.succeed("complete" as const))
      // codex's reset comes first: the loop waits for it (and the margin), then runs codex; test is still held.
      assert.include(seen.output, "waiting for every agent's usage limit until 1970-01-01T00:01:10Z, when codex is free (reset time); Ctrl-C stops the loop\n")
      assert.deepStrictEqual(ran(seen.records), [[1, "test", "limited"], [1, "codex", "limited"], [1, "codex", "complete"]])
    }))

  it.effect("with every agent held past --max-limit-wait, stops with usage-limit, to resume when the first is free", () =>
    Effect.gen(function*() {
      const seen = yield* runWith(() => limitedUntil(3_600_000), { maxLimitWaitMs: 0 }, undefined, {
        fallbacks: [{ id: "codex", script: () => limitedUntil(600_000) }]
      })
      assert.deepStrictEqual(
        Exit.map(seen.exit, (r) => [r.status, r.iterations, r.resumeAt] as const),
        Exit.succeed(["usage-limit", 1, 660_000] as const)
      )
      assert.deepStrictEqual(ran(seen.records), [[1, "test", "limited"], [1, "codex", "limited"]])
      assert.deepInclude(seen.state, { status: "usage-limit", resumeAt: "1970-01-01T00:11:00.000Z" })
      assert.deepStrictEqual(seen.state?.agents?.map((a) => [a.agent, a.limitedUntil]), [
        ["test", "1970-01-01T01:00:00.000Z"],
        // Held, for the choice, until its reset; the loop would have resumed a margin after it.
        ["codex", "1970-01-01T00:10:00.000Z"]
      ])
    }))

  it.effect("with --rotate, takes the agents in turn, passing over one a limit holds", () =>
    Effect.gen(function*() {
      let fallbackCalls = 0
      const seen = yield* runWith(
        (request) => (request.iteration === 5 ? scriptedRun(done) : scriptedRun("step\n")),
        { maxIterations: 6 },
        undefined,
        {
          rotate: true,
          fallbacks: [{ id: "command:./other.sh", script: () => (++fallbackCalls === 2 ? limitedUntil(3_600_000) : scriptedRun("other step\n")) }]
        }
      )
      assert.deepStrictEqual(ran(seen.records), [
        [1, "test", "continue"],
        [2, "command:./other.sh", "continue"],
        [3, "test", "continue"],
        [4, "command:./other.sh", "limited"],
        [4, "test", "continue"],
        [5, "test", "complete"]
      ])
      // Told once, as the limit is met; its turn passed over after that is not told again.
      assert.strictEqual(seen.output.split("switching to test: command:./other.sh is held by its usage limit until 1970-01-01T01:00:00Z\n").length, 2)
    }))

  it.effect("holds an agent whose limit does not reset by waiting for the rest of the run, and counts each agent's spend", () =>
    Effect.gen(function*() {
      const spent = (inputTokens: number, cost: number | null) =>
        HarnessEvent.Usage({ usage: { inputTokens, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost } })
      const seen = yield* runWith(
        () => [spent(100, 0.5), HarnessEvent.Limited({ message: "quota exceeded", resetAt: null, retryAfterMs: null, resets: false }), HarnessEvent.Exited({ exitCode: 1, signal: null })],
        { maxIterations: 2 },
        undefined,
        { fallbacks: [{ id: "codex", script: (request) => [spent(40, null), ...scriptedRun(request.iteration === 2 ? done : "step\n")] }] }
      )
      assert.deepStrictEqual(ran(seen.records), [[1, "test", "limited"], [1, "codex", "continue"], [2, "codex", "complete"]])
      assert.include(seen.output, "switching to codex: test is held by its usage limit for the rest of the run\n")
      // Not kept for a later run: a quota is not known to lift.
      assert.deepStrictEqual(seen.state?.agents?.map((a) => [a.agent, a.iterations, a.costUsd, a.tokens, a.limitedUntil]), [
        ["test", 1, 0.5, 100, null],
        ["codex", 2, null, 80, null]
      ])
    }))

  it.effect("a loop of one agent keeps no agent of the iteration in its state, as ever", () =>
    Effect.gen(function*() {
      const seen = yield* runWith(() => scriptedRun(done))
      assert.isUndefined(seen.state?.agent)
      assert.deepStrictEqual(seen.state?.agents?.map((a) => [a.agent, a.iterations]), [["test", 1]])
    }))

  it.effect("a run taken up again (--resume) does not walk into a limit its last sitting met; a new run tries again", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      let firstCalls = 0
      const first = yield* runWith(() => (++firstCalls === 1 ? limitedUntil(3_600_000) : scriptedRun(done)), { maxIterations: 1 }, undefined, {
        history,
        fallbacks: [{ id: "codex", script: () => scriptedRun("step one\n") }]
      })
      assert.deepStrictEqual(Exit.map(first.exit, (r) => r.status), Exit.succeed("max-iterations" as const))
      yield* TestClock.adjust("1 minute")
      const second = yield* runWith(() => scriptedRun(done), { maxIterations: 3 }, undefined, {
        history,
        resume: true,
        fallbacks: [{ id: "codex", script: () => scriptedRun("step two\n") }]
      })
      // Resumed at iteration 2: codex runs every iteration, since test's limit still holds.
      assert.deepStrictEqual(ran(second.records).slice(2), [[2, "codex", "continue"], [3, "codex", "continue"]])
      assert.deepStrictEqual(second.prompts.map((p) => p.iteration), [2, 3])
      assert.deepStrictEqual(second.state?.agents?.map((a) => [a.agent, a.iterations, a.limitedUntil]), [
        ["test", 1, "1970-01-01T01:00:00.000Z"],
        ["codex", 3, null]
      ])
      // It goes on with the agent the last sitting ran: no switch to tell.
      assert.notInclude(second.output, "switching to")
      // A new run, not taken up again, tries its first agent again.
      const third = yield* runWith(() => scriptedRun(done), { maxIterations: 3 }, undefined, {
        history,
        fallbacks: [{ id: "codex", script: () => scriptedRun("step three\n") }]
      })
      assert.deepStrictEqual(ran(third.records).slice(-1), [[1, "test", "complete"]])
    }))
})
