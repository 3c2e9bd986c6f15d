import { assert, describe, it } from "@effect/vitest"
import { type AgentNote, ChangeId, type GuardReport, type IterationRecord, type LoopState, type ReviewRecord } from "../src/domain/Domain.js"
import { reviewSpend, sumReviewSpend, usageTotals } from "../src/domain/Usage.js"
import { parseTasks } from "../src/prompt/Tasks.js"
import { hasSeveralAgents, isAbandoned, type LoopReading, loopSummary } from "../src/status/LoopSummary.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"

const changeId = ChangeId.make("001-01_x")

const state: LoopState = {
  changeId: "001-01_x",
  run: "r2",
  status: "running",
  iteration: 4,
  minIterations: 1,
  maxIterations: 20,
  startedAt: "2026-11-22T00:00:00.000Z",
  updatedAt: "2026-11-22T01:02:03.000Z",
  pid: 1,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  guards: null
}

const guards: GuardReport = {
  maxCostUsd: null, maxTokens: null, maxDurationMs: null, stallIterations: 5, maxConsecutiveFailures: 5, maxLimitWaitMs: 0,
  costUsd: null, tokens: 0, stalledIterations: 0, consecutiveFailures: 0
}

const usage = (inputTokens: number, cost: number | null): IterationRecord["usage"] =>
  ({ inputTokens, outputTokens: 5, reasoningTokens: 1, cacheReadTokens: 100, cacheWriteTokens: 100, cost })

const nothing: LoopReading = { changeId, state: null, history: [], tasks: parseTasks(null) }

const reading = (patch: Partial<LoopReading> = {}): LoopReading => ({ ...nothing, state, ...patch })

describe("a loop's summary", () => {
  it("of a change no loop has run on: status none, every figure unknown (null) or none, no task", () => {
    assert.deepStrictEqual(loopSummary(nothing), {
      changeId,
      status: "none",
      abandoned: false,
      shownStatus: "none",
      run: null,
      iteration: 0,
      minIterations: null,
      maxIterations: null,
      startedAt: null,
      updatedAt: null,
      elapsedMs: null,
      spend: { costUsd: null, tokens: null },
      usage: null,
      reviewUsage: null,
      reviews: { reviews: 0, approved: 0 },
      tasks: { complete: 0, shelved: 0, total: 0 },
      lastOutcome: null,
      lastCommit: null,
      branch: null,
      worktree: null,
      merge: null,
      stopReason: null,
      stopMessage: null,
      resumeAt: null,
      agent: null,
      agents: []
    })
  })

  it("takes the run's facts from its state", () => {
    const merge = { merged: false, text: "not merged: conflict in shared.txt" }
    const ended: LoopState = {
      ...state,
      status: "complete",
      branch: "spool/001-01_x",
      worktree: "/tmp/wt",
      merge,
      stopReason: "complete",
      stopMessage: "complete: the promise was accepted at iteration 4",
      resumeAt: null
    }
    assert.deepInclude(loopSummary(reading({ state: ended })), {
      status: "complete",
      shownStatus: "complete",
      run: "r2",
      iteration: 4,
      minIterations: 1,
      maxIterations: 20,
      startedAt: "2026-11-22T00:00:00.000Z",
      updatedAt: "2026-11-22T01:02:03.000Z",
      branch: "spool/001-01_x",
      worktree: "/tmp/wt",
      merge,
      stopReason: "complete",
      stopMessage: "complete: the promise was accepted at iteration 4"
    })
    const waiting = loopSummary(reading({ state: { ...state, status: "waiting", resumeAt: "2026-11-22T05:00:00.000Z" } }))
    assert.deepInclude(waiting, { status: "waiting", resumeAt: "2026-11-22T05:00:00.000Z" })
  })

  it("shows an abandoned loop as abandoned, its status still the state's", () => {
    assert.deepInclude(loopSummary(reading({ abandoned: true })), { status: "running", abandoned: true, shownStatus: "abandoned" })
    assert.deepInclude(loopSummary(reading({ abandoned: false })), { abandoned: false, shownStatus: "running" })
    // Where nothing could tell, it is not called abandoned.
    assert.deepInclude(loopSummary(reading()), { abandoned: false, shownStatus: "running" })
  })

  it("gives the run's time over its sittings, or else the span of its state's writes; none it cannot read", () => {
    assert.strictEqual(loopSummary(reading({ state: { ...state, elapsedMs: 90_000 } })).elapsedMs, 90_000)
    assert.strictEqual(loopSummary(reading({ state: { ...state, elapsedMs: 0 } })).elapsedMs, 0)
    assert.strictEqual(loopSummary(reading()).elapsedMs, 3_723_000)
    // A clock set back between the writes gives no negative time.
    assert.strictEqual(loopSummary(reading({ state: { ...state, updatedAt: "2026-11-21T23:00:00.000Z" } })).elapsedMs, 0)
    assert.isNull(loopSummary(reading({ state: { ...state, updatedAt: "not a time" } })).elapsedMs)
  })

  it("gives the run's spend as its guards counted it, a figure the agent never reported as null, not 0", () => {
    const spend = (costUsd: number | null, tokens: number) => loopSummary(reading({ state: { ...state, guards: { ...guards, costUsd, tokens } } })).spend
    assert.deepStrictEqual(loopSummary(reading()).spend, { costUsd: null, tokens: null })
    assert.deepStrictEqual(spend(null, 0), { costUsd: null, tokens: null })
    assert.deepStrictEqual(spend(null, 7), { costUsd: null, tokens: 7 })
    // A cost without tokens is 0 tokens.
    assert.deepStrictEqual(spend(0, 0), { costUsd: 0, tokens: 0 })
    assert.deepStrictEqual(spend(0.42, 1500), { costUsd: 0.42, tokens: 1500 })
  })

  it("totals the usage of the iterations read, of every run, an unknown cost as null", () => {
    const history = [
      iterationRecord({ run: "r1", iteration: 1, usage: usage(10, 0.5) }),
      iterationRecord({ run: "r2", iteration: 1 }),
      iterationRecord({ run: "r2", iteration: 2, usage: usage(20, null) })
    ]
    assert.deepStrictEqual(loopSummary(reading({ history })).usage, { tokens: 10 + 20 + 12, cost: 0.5 })
    assert.isNull(loopSummary(reading({ history: history.slice(1, 2) })).usage)
    assert.deepStrictEqual(loopSummary(reading({ history: history.slice(2) })).usage, { tokens: 26, cost: null })
    assert.deepStrictEqual(usageTotals(history), loopSummary(reading({ history })).usage)
  })

  it("counts the reviews and the approvals, and totals the reviewers' usage apart from the agents'", () => {
    const review = (verdict: ReviewRecord["verdict"], used: ReviewRecord["usage"]): ReviewRecord =>
      ({ reviewer: "codex:gpt-5.5", verdict, findings: verdict === "changes" ? "add a test" : null, durationMs: 100, usage: used })
    const history = [
      iterationRecord({ iteration: 1, usage: usage(1000, 1) }),
      iterationRecord({ iteration: 2, usage: usage(1000, 1), outcome: "changes", reviews: [review("changes", usage(30, 0.25))] }),
      iterationRecord({ iteration: 3, outcome: "complete", reviews: [review("approve", usage(40, null)), review("approve", null)] })
    ]
    const summary = loopSummary(reading({ history }))
    assert.deepStrictEqual(summary.reviews, { reviews: 3, approved: 2 })
    assert.deepStrictEqual(summary.reviewUsage, { tokens: 36 + 46, cost: 0.25 })
    assert.deepStrictEqual(summary.usage, { tokens: 2 * 1006, cost: 2 })
    assert.deepStrictEqual(reviewSpend(history), { reviews: 3, approved: 2, costUsd: 0.25, tokens: 82 })
    // Reviews that reported nothing: counted, their spend unknown; no review at all: nothing to show.
    assert.deepStrictEqual(reviewSpend([iterationRecord({ reviews: [review("none", null)] })]), { reviews: 1, approved: 0, costUsd: null, tokens: null })
    assert.isNull(reviewSpend(history.slice(0, 1)))
    assert.isNull(reviewSpend([iterationRecord({ reviews: [] })]))
  })

  it("sums the reviews of several runs, a figure none reported staying null", () => {
    assert.deepStrictEqual(
      sumReviewSpend([
        { reviews: 2, approved: 1, costUsd: 0.3, tokens: 900 },
        null,
        undefined,
        { reviews: 1, approved: 1, costUsd: null, tokens: null },
        { reviews: 1, approved: 0, costUsd: 0.1, tokens: 100 }
      ]),
      { reviews: 4, approved: 2, costUsd: 0.4, tokens: 1000 }
    )
    assert.deepStrictEqual(sumReviewSpend([{ reviews: 1, approved: 0, costUsd: null, tokens: null }]), { reviews: 1, approved: 0, costUsd: null, tokens: null })
    assert.isNull(sumReviewSpend([null, undefined]))
  })

  it("counts the tasks: complete, shelved and all; pending and in-progress ones only in all", () => {
    const tasks = parseTasks("- [x] 1.1 one\n- [ ] 1.2 two\n- [-] 1.3 three\n- [~] 1.4 four\n- [x] 1.5 five\n")
    assert.deepStrictEqual(loopSummary(reading({ tasks })).tasks, { complete: 2, shelved: 1, total: 5 })
  })

  it("takes the last outcome and the newest commit from the current run's iterations only", () => {
    const history = [
      iterationRecord({ run: "r1", iteration: 1, outcome: "complete", commit: "c-r1" }),
      iterationRecord({ run: "r2", iteration: 1, commit: "c1" }),
      iterationRecord({ run: "r2", iteration: 2, outcome: "failed" })
    ]
    assert.deepInclude(loopSummary(reading({ history })), { lastOutcome: "failed", lastCommit: "c1" })
    assert.deepInclude(loopSummary(reading({ history: history.slice(0, 1) })), { lastOutcome: null, lastCommit: null })
    assert.deepInclude(loopSummary(reading({ state: { ...state, run: "r1" }, history })), { lastOutcome: "complete", lastCommit: "c-r1" })
    // A history without a state: every record counts.
    assert.deepInclude(loopSummary({ ...nothing, history }), { status: "none", iteration: 0, lastOutcome: "failed", lastCommit: "c1" })
  })
})

describe("a loop's agents", () => {
  const note = (agent: string, harness: string, fields: Partial<AgentNote> = {}): AgentNote =>
    ({ agent, harness, model: null, iterations: 0, costUsd: null, tokens: 0, limitedUntil: null, ...fields })

  it("are the state's: the agent of the last iteration and each agent's spend, as read", () => {
    const agents = [note("claude", "claude", { iterations: 3, costUsd: 1.2, tokens: 9000, limitedUntil: "2026-11-22T05:00:00.000Z" }), note("codex:gpt-5.5", "codex")]
    const summary = loopSummary(reading({ state: { ...state, agent: "codex:gpt-5.5", agents } }))
    assert.deepInclude(summary, { agent: "codex:gpt-5.5", agents })
    assert.isTrue(hasSeveralAgents(summary))
  })

  it("of a run of one agent, or of a state written before agents were kept, are not shown one by one", () => {
    assert.isFalse(hasSeveralAgents(loopSummary(reading({ state: { ...state, agents: [note("claude", "claude", { iterations: 4 })] } }))))
    assert.deepInclude(loopSummary(reading()), { agent: null, agents: [] })
    assert.isFalse(hasSeveralAgents(loopSummary(reading())))
  })
})

describe("isAbandoned", () => {
  it("holds a loop abandoned when its state says it runs or waits and nothing holds it; an ended loop never is", () => {
    assert.isTrue(isAbandoned("running", false))
    assert.isTrue(isAbandoned("waiting", false))
    assert.isFalse(isAbandoned("running", true))
    assert.isFalse(isAbandoned("waiting", true))
    for (const status of ["complete", "failed", "stopped", "max-iterations", "usage-limit", "deadline", "interrupted"] as const) {
      assert.isFalse(isAbandoned(status, false), status)
    }
    assert.isFalse(isAbandoned(null, false))
  })
})
