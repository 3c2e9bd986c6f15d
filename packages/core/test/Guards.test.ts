import { assert, describe, it } from "@effect/vitest"
import type { IterationOutcome } from "../src/domain/Domain.js"
import { errorFingerprint } from "../src/guards/ErrorFingerprint.js"
import {
  addSpend,
  countIteration,
  type GuardCounters,
  type GuardSettings,
  guardReport,
  initialCounters,
  judgeCounters,
  reportedSpend,
  spendStop,
  unsupportedCap
} from "../src/guards/Guards.js"

const settings = (overrides: Partial<GuardSettings> = {}): GuardSettings => ({
  maxCostUsd: null,
  maxTokens: null,
  maxDurationMs: null,
  stallIterations: 5,
  maxConsecutiveFailures: 5,
  failFast: false,
  maxLimitWaitMs: 6 * 3_600_000,
  ...overrides
})

const usage = (tokens: number, cost: number | null) => ({
  inputTokens: tokens,
  outputTokens: 0,
  reasoningTokens: 0,
  cacheReadTokens: 1_000_000,
  cacheWriteTokens: 0,
  cost
})

const run = (outcomes: ReadonlyArray<[IterationOutcome, boolean | null, string | null]>) =>
  outcomes.reduce<GuardCounters>((counters, [outcome, progress, failure]) => countIteration(counters, { outcome, progress, failure }), initialCounters)

describe("error fingerprints", () => {
  it("recognise the same error whatever its times, ids, paths and numbers", () => {
    const a = errorFingerprint("Error: connect ECONNREFUSED 127.0.0.1:4000 at 2026-11-22T03:14:15.123Z (request req_8f3a9c2b1d7e4f60)")
    const b = errorFingerprint("Error: connect ECONNREFUSED 127.0.0.1:4311 at 2026-11-23T01:02:03Z (request req_1a2b3c4d5e6f7a8b)")
    assert.strictEqual(a, b)
    assert.strictEqual(
      errorFingerprint("Cannot find module '/home/ada/src/app/dist/index.js' (3 times, 12:04:05)"),
      errorFingerprint("Cannot find module '/tmp/spool-x1/dist/main.js' (14 times, 09:00:00)")
    )
    assert.strictEqual(errorFingerprint("session 0b7e3c1a-9d4f-4e2b-8a6c-1f2e3d4c5b6a failed"), errorFingerprint("session 5a6b7c8d-1e2f-4a3b-9c8d-7e6f5a4b3c2d failed"))
  })

  it("keep different errors apart", () => {
    assert.notStrictEqual(errorFingerprint("TypeError: x is undefined"), errorFingerprint("SyntaxError: unexpected token"))
    assert.notStrictEqual(errorFingerprint("exit code 1"), errorFingerprint("it timed out"))
  })
})

describe("spend caps", () => {
  it("stop at the first cap reached, naming it with the totals", () => {
    const spend = addSpend(addSpend(initialCounters.spend, usage(600, 0.75)), usage(500, 0.5))
    assert.deepStrictEqual(spend, { costUsd: 1.25, tokens: 1100 })
    assert.deepStrictEqual(spendStop(settings({ maxCostUsd: 1 }), spend, 65_000), {
      reason: "max-cost",
      message: "stopped: --max-cost $1.00 reached ($1.25 spent, 1100 tokens, 1m05s)"
    })
    assert.strictEqual(spendStop(settings({ maxTokens: 1000 }), spend, 0)?.reason, "max-tokens")
    assert.strictEqual(spendStop(settings({ maxDurationMs: 60_000 }), spend, 60_000)?.reason, "max-duration")
    assert.isNull(spendStop(settings({ maxCostUsd: 2, maxTokens: 2000, maxDurationMs: 120_000 }), spend, 60_000))
  })

  it("count tokens without cache reads, and leave cost unknown while none is reported", () => {
    const spend = addSpend(initialCounters.spend, usage(10, null))
    assert.deepStrictEqual(spend, { costUsd: null, tokens: 10 })
    assert.isNull(spendStop(settings({ maxCostUsd: 0.01 }), spend, 0))
  })

  it("report what a run spent as unknown until the agent reported it: no guards, or no cost and no token yet", () => {
    const report = (costUsd: number | null, tokens: number) => guardReport(settings(), { ...initialCounters, spend: { costUsd, tokens } })
    assert.deepStrictEqual(reportedSpend(null), { costUsd: null, tokens: null })
    assert.deepStrictEqual(reportedSpend(report(null, 0)), { costUsd: null, tokens: null })
    assert.deepStrictEqual(reportedSpend(report(null, 120)), { costUsd: null, tokens: 120 })
    // A cost without tokens (an agent that reports money only) is 0 tokens, not unknown.
    assert.deepStrictEqual(reportedSpend(report(0.25, 0)), { costUsd: 0.25, tokens: 0 })
    assert.deepStrictEqual(reportedSpend(report(0, 0)), { costUsd: 0, tokens: 0 })
  })

  it("refuse a cap the harness cannot report", () => {
    assert.strictEqual(unsupportedCap(settings({ maxCostUsd: 5 }), "command", { cost: false, tokens: false })?.flag, "--max-cost")
    assert.strictEqual(unsupportedCap(settings({ maxTokens: 5 }), "codex", { cost: false, tokens: true }), null)
    assert.include(
      unsupportedCap(settings({ maxTokens: 5 }), "command", { cost: false, tokens: false })?.message ?? "",
      "--max-tokens needs a harness that reports tokens, and the command harness does not"
    )
  })
})

describe("stall breaker", () => {
  it("stops after n iterations in a row without progress, warning and telling the agent one before", () => {
    const four = run([["continue", false, null], ["continue", false, null], ["continue", false, null], ["continue", false, null]])
    const warned = judgeCounters(settings(), four, null, 0)
    assert.strictEqual(warned._tag, "Continue")
    assert.include(warned._tag === "Continue" ? warned.warning : "", "4 iterations in a row made no progress")
    assert.include(warned._tag === "Continue" ? warned.note : "", "The last 4 iterations changed nothing")
    const five = countIteration(four, { outcome: "continue", progress: false, failure: null })
    assert.deepInclude(judgeCounters(settings(), five, null, 0), { _tag: "Stop" })
  })

  it("starts again at any progress, and does not count failed, limited or unknown iterations", () => {
    assert.strictEqual(run([["continue", false, null], ["continue", false, null], ["continue", true, null]]).stalledIterations, 0)
    assert.strictEqual(run([["continue", false, null], ["failed", false, "boom"], ["limited", false, null], ["continue", null, null]]).stalledIterations, 1)
    assert.deepStrictEqual(judgeCounters(settings({ stallIterations: 0 }), run(Array.from({ length: 9 }, () => ["continue", false, null] as const)), null, 0), {
      _tag: "Continue",
      warning: null,
      note: null
    })
  })
})

describe("failure breaker", () => {
  it("stops after n failed iterations in a row, naming the error they share", () => {
    const same = run([["failed", false, "ECONNREFUSED 127.0.0.1:4000"], ["timeout", false, "ECONNREFUSED 127.0.0.1:4001"], ["failed", false, "ECONNREFUSED 127.0.0.1:4002"]])
    assert.deepStrictEqual(judgeCounters(settings({ maxConsecutiveFailures: 3 }), same, "ECONNREFUSED 127.0.0.1:4002", 0), {
      _tag: "Fail",
      failure: { failures: 3, sameError: "ECONNREFUSED 127.0.0.1:4002" }
    })
    const mixed = run([["failed", false, "a"], ["failed", false, "b"], ["failed", false, "c"]])
    assert.deepStrictEqual(judgeCounters(settings({ maxConsecutiveFailures: 3 }), mixed, "c", 0), { _tag: "Fail", failure: { failures: 3, sameError: null } })
  })

  it("counts only failures in a row; a limited iteration neither counts nor breaks the streak; --fail-fast means 1", () => {
    const broken = run([["failed", false, "x"], ["failed", false, "x"], ["continue", false, null], ["failed", false, "x"]])
    assert.strictEqual(broken.consecutiveFailures, 1)
    assert.strictEqual(run([["failed", false, "x"], ["limited", false, null], ["failed", false, "x"]]).consecutiveFailures, 2)
    assert.deepInclude(judgeCounters(settings({ failFast: true }), run([["failed", false, "x"]]), "x", 0), { _tag: "Fail" })
    assert.deepInclude(judgeCounters(settings(), run([["failed", false, "x"]]), "x", 0), { _tag: "Continue" })
  })
})

describe("guards, exactly", () => {
  it("say what to do about a cap the harness cannot report, and refuse nothing that is not set", () => {
    const none = { cost: false, tokens: false }
    assert.strictEqual(
      unsupportedCap(settings({ maxCostUsd: 5 }), "command", none)?.message,
      "--max-cost needs a harness that reports cost, and the command harness does not; drop --max-cost, or cap --max-tokens or --max-duration instead"
    )
    assert.strictEqual(
      unsupportedCap(settings({ maxTokens: 5 }), "command", none)?.message,
      "--max-tokens needs a harness that reports tokens, and the command harness does not; drop --max-tokens, or cap --max-duration instead"
    )
    assert.isNull(unsupportedCap(settings({ maxDurationMs: 1000 }), "command", none))
    assert.isNull(unsupportedCap(settings({ maxCostUsd: 5, maxTokens: 5 }), "opencode", { cost: true, tokens: true }))
  })

  it("stop at a cap reached exactly, with money in cents from ten cents up and to the hundredth of a cent below", () => {
    const spend = { costUsd: 0.42, tokens: 1000 }
    assert.deepStrictEqual(spendStop(settings({ maxCostUsd: 0.42 }), spend, 1500), {
      reason: "max-cost",
      message: "stopped: --max-cost $0.42 reached ($0.42 spent, 1000 tokens, 1.5s)"
    })
    assert.deepStrictEqual(spendStop(settings({ maxCostUsd: 0.05 }), { costUsd: 0.0512, tokens: 1000 }, 1500), {
      reason: "max-cost",
      message: "stopped: --max-cost $0.0500 reached ($0.0512 spent, 1000 tokens, 1.5s)"
    })
    assert.deepStrictEqual(spendStop(settings({ maxTokens: 1000 }), spend, 0), {
      reason: "max-tokens",
      message: "stopped: --max-tokens 1000 reached ($0.42 spent, 1000 tokens, 0ms)"
    })
    assert.deepStrictEqual(spendStop(settings({ maxDurationMs: 3_600_000 }), { costUsd: null, tokens: 0 }, 3_600_000), {
      reason: "max-duration",
      message: "stopped: --max-duration 1h00m reached (cost unknown, 0 tokens, 1h00m)"
    })
    assert.isNull(spendStop(settings({ maxCostUsd: 0.43, maxTokens: 1001 }), spend, 0))
  })

  it("keep each failure's fingerprint for the streak only, and count an interrupted iteration toward nothing", () => {
    const streak = run([["failed", false, "boom 1"], ["timeout", false, null]])
    assert.deepStrictEqual(streak.failureFingerprints, [errorFingerprint("boom 1"), null])
    assert.strictEqual(streak.consecutiveFailures, 2)
    assert.deepStrictEqual(countIteration(streak, { outcome: "continue", progress: true, failure: null }), initialCounters)
    const stalled = run([["continue", false, null]])
    assert.deepStrictEqual(countIteration(stalled, { outcome: "interrupted", progress: false, failure: null }), stalled)
    assert.deepStrictEqual(countIteration(streak, { outcome: "interrupted", progress: false, failure: null }), streak)
  })

  it("name the error only when each of the last n failures had it: not with --fail-fast, not when one said nothing", () => {
    assert.deepStrictEqual(judgeCounters(settings({ failFast: true }), run([["failed", false, "x"]]), "x", 0), {
      _tag: "Fail",
      failure: { failures: 1, sameError: null }
    })
    // Only the last n failures count: an older, different one does not hide the error they share.
    const longer = run([["failed", false, "old"], ["failed", false, "disk full"], ["failed", false, "disk full"]])
    assert.deepStrictEqual(judgeCounters(settings({ maxConsecutiveFailures: 2 }), longer, "disk full", 0), {
      _tag: "Fail",
      failure: { failures: 3, sameError: "disk full" }
    })
    const silent = run([["failed", false, null], ["failed", false, null]])
    assert.deepStrictEqual(judgeCounters(settings({ maxConsecutiveFailures: 2 }), silent, "exit code 1", 0), {
      _tag: "Fail",
      failure: { failures: 2, sameError: null }
    })
    // Counters that know fewer failures than the streak name none.
    const unknown: GuardCounters = { ...initialCounters, consecutiveFailures: 2, failureFingerprints: [errorFingerprint("x")] }
    assert.deepStrictEqual(judgeCounters(settings({ maxConsecutiveFailures: 2 }), unknown, "x", 0), {
      _tag: "Fail",
      failure: { failures: 2, sameError: null }
    })
    assert.deepInclude(judgeCounters(settings({ maxConsecutiveFailures: 0 }), run(Array.from({ length: 9 }, () => ["failed", false, "x"] as const)), "x", 0), {
      _tag: "Continue"
    })
  })

  it("word the stall warning, the note to the agent and the stop for one iteration", () => {
    const one = run([["continue", false, null]])
    assert.deepStrictEqual(judgeCounters(settings({ stallIterations: 2 }), one, null, 0), {
      _tag: "Continue",
      warning: "1 iteration in a row made no progress (no file changed, no commit, no task ticked, no completion claimed); " +
        "the loop stops after 2 (--stall-iterations)",
      note: "The last iteration changed nothing: no file, no commit, no task ticked in tasks.md. Do not repeat what did not work: " +
        "find out what blocks you and try another way, or, if the work is truly done, verify it and claim completion. " +
        "One more iteration without progress stops the loop."
    })
    assert.deepStrictEqual(judgeCounters(settings({ stallIterations: 1 }), one, null, 2000), {
      _tag: "Stop",
      stop: { reason: "stall", message: "stopped: 1 iteration in a row made no progress (--stall-iterations 1; cost unknown, 0 tokens, 2.0s)" }
    })
    // With a breaker of 1 there is no iteration "one before" to warn at.
    assert.deepStrictEqual(judgeCounters(settings({ stallIterations: 1 }), initialCounters, null, 0), { _tag: "Continue", warning: null, note: null })
  })
})

