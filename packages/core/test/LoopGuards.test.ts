import { assert, describe, it } from "@effect/vitest"
import { Cause, type Context, Deferred, Effect, Exit, Option, TestClock } from "effect"
import { CheckRunner } from "../src/verify/CheckRunner.js"
import { GitSummary } from "../src/git/GitSummary.js"
import { HarnessEvent, scriptedRun } from "../src/harness/HarnessService.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { changeId, done, hangsAfter, runWith, untilPrinted } from "./loopFixture.js"

const usage = (tokens: number, cost: number | null) =>
  HarnessEvent.Usage({ usage: { inputTokens: tokens, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost } })

const limited = (overrides: Partial<Omit<Extract<HarnessEvent, { _tag: "Limited" }>, "_tag">> = {}) => [
  HarnessEvent.Limited({ message: "429 rate limited", resetAt: null, retryAfterMs: 120_000, resets: true, ...overrides }),
  HarnessEvent.Exited({ exitCode: 1, signal: null })
]

const failureOf = <A, E>(exit: Exit.Exit<A, E>) => (Exit.isFailure(exit) ? Option.getOrNull(Cause.failureOption(exit.cause)) : null)

describe("the loop's guards", () => {
  it.effect("waits out a usage limit, showing when it resumes, then runs the same iteration number again", () =>
    Effect.gen(function*() {
      let calls = 0
      const seen: Array<unknown> = []
      const { exit, records, output, prompts, journal, state } = yield* runWith(
        () => (++calls === 1 ? limited() : scriptedRun(done)),
        { failFast: true },
        undefined,
        {
          during: (out) =>
            Effect.gen(function*() {
              yield* untilPrinted(out, "waiting for the usage limit until")
              const waiting = Option.getOrNull(yield* Effect.orDie((yield* HistoryStore).readState(changeId)))
              seen.push(waiting?.status, waiting?.resumeAt)
              yield* TestClock.adjust("2 minutes")
            })
        }
      )
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 1] as const))
      assert.deepStrictEqual(records.map((r) => [r.iteration, r.outcome, r.error]), [[1, "limited", "429 rate limited"], [1, "complete", null]])
      assert.deepStrictEqual(prompts.map((p) => p.iteration), [1, 1])
      assert.deepStrictEqual(seen, ["waiting", "1970-01-01T00:02:00.000Z"])
      assert.include(output, "waiting for the usage limit until 1970-01-01T00:02:00Z (retry-after)")
      // Neither a failure (--fail-fast did not stop it) nor journaled.
      assert.deepStrictEqual(journal, [])
      assert.deepInclude(state, { status: "complete", stopReason: "complete", resumeAt: null })
    }))

  it.effect("stops at once on a limit that does not reset, recording when it would resume", () =>
    Effect.gen(function*() {
      const { exit, records, state, output } = yield* runWith(() => limited({ resets: false, resetAt: Date.UTC(2026, 10, 23, 15), retryAfterMs: null, message: "Quota exceeded" }))
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["usage-limit", "usage-limit", 1] as const))
      assert.deepStrictEqual(records.map((r) => r.outcome), ["limited"])
      assert.deepInclude(state, { status: "usage-limit", stopReason: "usage-limit", resumeAt: "2026-11-23T15:01:00.000Z" })
      assert.include(output, "stopped: the usage limit does not reset by waiting (Quota exceeded); run spool again after 2026-11-23T15:01:00Z")
    }))

  it.effect("gives up on a limit whose reset lies past --max-limit-wait, without waiting", () =>
    Effect.gen(function*() {
      const { exit, state } = yield* runWith(() => limited({ retryAfterMs: 3 * 3_600_000 }), { maxLimitWaitMs: 3_600_000 })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("usage-limit" as const))
      assert.strictEqual(state?.resumeAt, "1970-01-01T03:00:00.000Z")
    }))

  it.effect("stops the agent mid-iteration when the cost cap is reached, records the iteration as stopped and commits its work", () =>
    Effect.gen(function*() {
      const git = GitSummary.layerTest({ changes: [{ changedFiles: 1, files: ["a"], insertions: 1, deletions: 0 }, { changedFiles: 2, files: ["a", "b"], insertions: 2, deletions: 0 }] })
      const { exit, records, output, state } = yield* runWith(
        (r) => (r.iteration === 1 ? [usage(100, 0.4), ...scriptedRun("step one\n")] : hangsAfter(usage(200, 0.7))),
        { maxCostUsd: 1 },
        git
      )
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-cost", 2] as const))
      assert.deepStrictEqual(records.map((r) => [r.outcome, r.commit]), [["continue", "c0ffee1"], ["stopped", "c0ffee2"]])
      assert.include(output, "--- iteration 2: stopped")
      assert.include(output, "stopped: --max-cost $1.00 reached ($1.10 spent, 300 tokens,")
      assert.deepInclude(state?.guards, { maxCostUsd: 1, costUsd: 1.1, tokens: 300 })
      assert.deepInclude(state, { status: "stopped", stopReason: "max-cost" })
    }))

  it.effect("stops an agent still running when --max-duration is up (fake clock)", () =>
    Effect.gen(function*() {
      const { exit, records } = yield* runWith(() => hangsAfter(HarnessEvent.AgentText({ text: "thinking\n" })), { maxDurationMs: 60_000, inactivityTimeoutMs: 3_600_000 }, undefined, {
        during: (out) => Effect.zipRight(untilPrinted(out, "=== spool ralph: iteration 1/5"), TestClock.adjust("1 minute"))
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason] as const), Exit.succeed(["stopped", "max-duration"] as const))
      assert.deepStrictEqual(records.map((r) => r.outcome), ["stopped"])
    }))

  it.effect("stops once --max-tokens is reached", () =>
    Effect.gen(function*() {
      const { exit, records, output } = yield* runWith(() => [usage(600, null), ...scriptedRun("working\n")], { maxTokens: 1000 })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-tokens", 2] as const))
      // Reached as the second iteration reports its usage: stopped mid-run, or just after it if it ended first.
      assert.strictEqual(records.length, 2)
      assert.include(output, "stopped: --max-tokens 1000 reached (cost unknown, 1200 tokens,")
    }))

  it.effect("refuses a cap the harness cannot report before anything runs", () =>
    Effect.gen(function*() {
      const { exit, state, prompts } = yield* runWith(() => scriptedRun(done), { maxCostUsd: 5 }, undefined, { reports: { cost: false, tokens: false } })
      assert.strictEqual(failureOf(exit)?._tag, "UnsupportedGuardError")
      assert.isNull(state)
      assert.strictEqual(prompts.length, 0)
    }))

  it.effect("stops after --stall-iterations without progress, warning one before and telling the agent", () =>
    Effect.gen(function*() {
      const { exit, output, prompts, state } = yield* runWith(() => scriptedRun("looked around\n"), { stallIterations: 3, maxIterations: 10 })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "stall", 3] as const))
      assert.include(output, "warning: 2 iterations in a row made no progress")
      assert.include(output, "stopped: 3 iterations in a row made no progress (--stall-iterations 3;")
      assert.notInclude(prompts[1]!.prompt, "changed nothing")
      assert.include(prompts[2]!.prompt, "## Notes from the loop\n\n- The last 2 iterations changed nothing")
      assert.deepInclude(state?.guards, { stallIterations: 3, stalledIterations: 3 })
    }))

  it.effect("counts files changed and claims as progress, and failed iterations toward the failure breaker only", () =>
    Effect.gen(function*() {
      const change = { changedFiles: 1, files: ["a"], insertions: 1, deletions: 0 }
      const none = { changedFiles: 0, files: [], insertions: 0, deletions: 0 }
      const git = GitSummary.layerTest({ changes: [none, change, none, none, none, none, none] })
      const { exit, records } = yield* runWith(
        (r) => (r.iteration >= 3 && r.iteration <= 5 ? scriptedRun("boom\n", 1) : r.iteration === 7 ? scriptedRun(done) : scriptedRun("x\n")),
        { stallIterations: 2, maxIterations: 7 },
        git
      )
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
      assert.deepStrictEqual(records.map((r) => r.outcome), ["continue", "continue", "failed", "failed", "failed", "continue", "complete"])
    }))

  it.effect("stops with exit 1 after --max-consecutive-failures, naming the error they share", () =>
    Effect.gen(function*() {
      const { exit, records, state } = yield* runWith(
        (r) => [HarnessEvent.Failed({ message: `connect ECONNREFUSED 127.0.0.1:${4000 + r.iteration}` }), HarnessEvent.Exited({ exitCode: 1, signal: null })],
        { maxConsecutiveFailures: 3 }
      )
      const error = failureOf(exit)
      assert.strictEqual(error?._tag, "LoopFailedError")
      assert.strictEqual(error?.message, "the same error 3 times in a row (--max-consecutive-failures 3): connect ECONNREFUSED 127.0.0.1:4003; see spool ralph --status")
      assert.strictEqual(records.length, 3)
      assert.deepInclude(state, { status: "failed", stopReason: "failures" })
    }))

  it.effect("names no error when the failures in a row differ", () =>
    Effect.gen(function*() {
      const { exit } = yield* runWith((r) => scriptedRun("x\n", r.iteration), { maxConsecutiveFailures: 2 })
      assert.strictEqual(failureOf(exit)?.message, "2 iterations failed in a row (--max-consecutive-failures 2); the last one: the harness exited with code 2; see spool ralph --status")
    }))
})

describe("how guards end a run", () => {
  it.effect("marks the state running again, with no resume time, once a usage limit has been waited out", () =>
    Effect.gen(function*() {
      let calls = 0
      const seen: Array<unknown> = []
      const store = yield* Deferred.make<Context.Tag.Service<HistoryStore>>()
      const { exit } = yield* runWith(
        () =>
          ++calls === 1 ? limited() : Effect.gen(function*() {
            // What the state file says as the same iteration runs again.
            const state = Option.getOrNull(yield* Effect.orDie((yield* Deferred.await(store)).readState(changeId)))
            seen.push(state?.status, state?.resumeAt)
            return scriptedRun(done)
          }),
        {},
        undefined,
        {
          during: (out) =>
            Effect.gen(function*() {
              yield* Deferred.succeed(store, yield* HistoryStore)
              yield* untilPrinted(out, "waiting for the usage limit until")
              yield* TestClock.adjust("2 minutes")
            })
        }
      )
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 1] as const))
      assert.deepStrictEqual(seen, ["running", null])
    }))

  it.effect("stops at once, waiting for nothing, when its spend reached a cap in the iteration that met a usage limit", () =>
    Effect.gen(function*() {
      let calls = 0
      const { exit, output, prompts, state } = yield* runWith(
        () => (++calls === 1 ? scriptedRun("step one\n") : [usage(1200, null), ...limited()]),
        { maxTokens: 1000 }
      )
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-tokens", 1] as const))
      assert.deepStrictEqual(prompts.map((p) => p.iteration), [1, 2])
      assert.deepInclude(state, { status: "stopped", stopReason: "max-tokens", iteration: 2 })
      assert.notInclude(output, "waiting for")
    }))

  it.effect("says to run again once a limit that does not reset, and gave no time, is lifted", () =>
    Effect.gen(function*() {
      const { exit, state, output } = yield* runWith(() => limited({ resets: false, resetAt: null, retryAfterMs: null, message: "Quota exceeded" }))
      const message = "stopped: the usage limit does not reset by waiting (Quota exceeded); run spool again once it is lifted"
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.message, r.resumeAt] as const), Exit.succeed(["usage-limit", message, null] as const))
      assert.deepInclude(state, { status: "usage-limit", resumeAt: null, stopMessage: message })
      assert.include(output, `${message}\n`)
    }))

  it.effect("stops on a cap reached in the last iteration as the cap, not as --max-iterations", () =>
    Effect.gen(function*() {
      const cost = yield* runWith(() => hangsAfter(usage(200, 1.5)), { maxCostUsd: 1, maxIterations: 1 })
      assert.deepStrictEqual(Exit.map(cost.exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-cost", 1] as const))
      const tokens = yield* runWith(() => [usage(1200, null), ...scriptedRun("working\n")], { maxTokens: 1000, maxIterations: 1 })
      assert.deepStrictEqual(Exit.map(tokens.exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-tokens", 1] as const))
      assert.include(tokens.output, "stopped: --max-tokens 1000 reached (cost unknown, 1200 tokens,")
    }))

  it.effect("stops on --max-duration when time runs out after the agent ended, while its claim is checked", () =>
    Effect.gen(function*() {
      const checks = CheckRunner.layerTest(() =>
        Effect.as(Effect.sleep("2 minutes"), { exitCode: 1, signal: null, timedOut: false, durationMs: 120_000, output: "1 failing\n" })
      )
      const { exit, records } = yield* runWith(() => scriptedRun(done), { maxDurationMs: 60_000, maxIterations: 1, verify: ["pnpm test"] }, undefined, {
        checks,
        during: (out) =>
          Effect.gen(function*() {
            yield* untilPrinted(out, "checking the claim: pnpm test")
            // Until the check has ended: its sleep may not have begun when the clock first moves.
            for (let i = 0; i < 50 && !out().includes("--- iteration 1:"); i++) {
              yield* TestClock.adjust("1 minute")
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
            }
          })
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-duration", 1] as const))
      assert.deepStrictEqual(records.map((r) => [r.outcome, r.verify?.[0]?.passed]), [["failed", false]])
    }))
})
