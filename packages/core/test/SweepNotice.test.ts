import { assert, describe, it } from "@effect/vitest"
import type { AgentNote } from "../src/domain/Domain.js"
import { approvalNotice, noticeLine, sweepNotice } from "../src/notify/Notice.js"
import { sweepReviews } from "../src/sweep/Sweep.js"

describe("the notice of a sweep's end", () => {
  it("tells how it ended, each change's outcome and the totals", () => {
    const row = { durationMs: 1, merge: null, message: null, branch: null, lastCommit: null, agents: [] }
    const draft = sweepNotice({
      ending: "failed",
      rows: [
        { ...row, changeId: "001-01_a", outcome: "complete", iterations: 2, costUsd: 0.5, tokens: 100, branch: "spool/001-01_a", lastCommit: "c1" },
        { ...row, changeId: "001-02_b", outcome: "failed", iterations: 3, costUsd: null, tokens: 50 },
        { ...row, changeId: "001-03_c", outcome: "complete", iterations: 1, costUsd: 0.25, tokens: null }
      ]
    })
    assert.strictEqual(draft.event, "sweep-ended")
    assert.strictEqual(draft.change, null)
    assert.strictEqual(draft.outcome, "failed")
    assert.strictEqual(draft.message, "failed: 3 changes (2 complete, 1 failed)")
    assert.strictEqual(draft.iteration, 6)
    assert.strictEqual(draft.costUsd, 0.75)
    assert.strictEqual(draft.tokens, 150)
    assert.deepStrictEqual(draft.sweep!.changes[0], {
      change: "001-01_a",
      outcome: "complete",
      iterations: 2,
      costUsd: 0.5,
      tokens: 100,
      branch: "spool/001-01_a",
      commit: "c1"
    })
    assert.strictEqual(noticeLine({ ...draft, tasks: null, time: "t" }), "spool: sweep ended ($0.75, 150 tokens): failed: 3 changes (2 complete, 1 failed)")
  })

  it("of one change says so in the singular", () => {
    const row = { durationMs: 1, merge: null, message: null, branch: null, lastCommit: null, costUsd: null, tokens: null, agents: [] }
    const draft = sweepNotice({ ending: "stopped", rows: [{ ...row, changeId: "001-01_a", outcome: "max-iterations", iterations: 20 }] })
    assert.strictEqual(draft.message, "stopped: 1 change (1 max-iterations)")
  })

  it("of nothing swept says so, with no spend", () => {
    const draft = sweepNotice({ ending: "complete", rows: [] })
    assert.strictEqual(draft.message, "complete: 0 changes")
    assert.strictEqual(draft.costUsd, null)
    assert.strictEqual(draft.tokens, null)
  })

  it("with several agents in a loop: each change's agents, and each agent's spend summed over the sweep", () => {
    const note = (agent: string, harness: string, fields: Partial<AgentNote> = {}): AgentNote =>
      ({ agent, harness, model: null, iterations: 0, costUsd: null, tokens: 0, limitedUntil: null, ...fields })
    const row = { durationMs: 1, merge: null, message: null, branch: null, lastCommit: null, tokens: null, outcome: "complete" as const }
    const draft = sweepNotice({
      ending: "complete",
      rows: [
        { ...row, changeId: "001-01_a", iterations: 3, costUsd: 1, agents: [note("claude", "claude", { iterations: 2, costUsd: 1, tokens: 800 }), note("codex", "codex", { iterations: 1, tokens: 300 })] },
        { ...row, changeId: "001-02_b", iterations: 1, costUsd: 0.2, agents: [note("claude", "claude", { iterations: 1, costUsd: 0.2, tokens: 100 }), note("codex", "codex")] },
        { ...row, changeId: "001-03_c", iterations: 0, costUsd: null, agents: [] }
      ]
    })
    assert.deepStrictEqual(draft.sweep!.changes[0]!.agents, [
      { agent: "claude", iterations: 2, costUsd: 1, tokens: 800 },
      { agent: "codex", iterations: 1, costUsd: null, tokens: 300 }
    ])
    // An agent that reported nothing has spent what is not known.
    assert.deepStrictEqual(draft.sweep!.changes[1]!.agents![1], { agent: "codex", iterations: 0, costUsd: null, tokens: null })
    assert.notProperty(draft.sweep!.changes[2]!, "agents")
    assert.deepStrictEqual(draft.sweep!.agents, [
      { agent: "claude", iterations: 3, costUsd: 1.2, tokens: 900 },
      { agent: "codex", iterations: 1, costUsd: null, tokens: 300 }
    ])
    // Loops of one agent each: no agents anywhere.
    const one = sweepNotice({ ending: "complete", rows: [{ ...row, changeId: "001-01_a", iterations: 1, costUsd: 0.2, agents: [note("claude", "claude", { iterations: 1 })] }] })
    assert.notProperty(one.sweep!, "agents")
    assert.notProperty(one.sweep!.changes[0]!, "agents")
  })

  it("of changes whose agents reported nothing has no spend: cost and tokens unknown (null)", () => {
    const row = { durationMs: 1, merge: null, message: null, branch: null, lastCommit: null, costUsd: null, tokens: null, agents: [], outcome: "complete" as const, iterations: 1 }
    const draft = sweepNotice({ ending: "complete", rows: [{ ...row, changeId: "001-01_a" }, { ...row, changeId: "001-02_b" }] })
    assert.strictEqual(draft.costUsd, null)
    assert.strictEqual(draft.tokens, null)
    assert.strictEqual(noticeLine({ ...draft, tasks: null, time: "t" }), "spool: sweep ended: complete: 2 changes (2 complete)")
  })

  it("tells of a completed change awaiting a person's approval: what to run to approve or reject it, and its spend, branch and commit", () => {
    const row = {
      changeId: "001-01_greet",
      outcome: "complete" as const,
      iterations: 2,
      durationMs: 1,
      merge: null,
      message: null,
      costUsd: 0.5,
      tokens: 1200,
      branch: "spool/001-01_greet",
      lastCommit: "abc1234",
      agents: [],
      awaitingApproval: true as const
    }
    assert.deepStrictEqual(approvalNotice(row, "main"), {
      event: "awaiting-approval",
      change: "001-01_greet",
      run: null,
      iteration: 2,
      maxIterations: null,
      outcome: "awaiting-approval",
      message: "complete, awaiting approval before its merge into main: spool ralph --approve 001-01_greet, or --reject 001-01_greet \"<why>\" to run it again",
      costUsd: 0.5,
      tokens: 1200,
      branch: "spool/001-01_greet",
      commit: "abc1234",
      resumeAt: null
    })
  })
})

describe("a sweep's reviews", () => {
  const row = { durationMs: 1, merge: null, message: null, branch: null, lastCommit: null, agents: [], outcome: "complete" as const, iterations: 1 }

  it("are the reviews of its changes and what their reviewers spent, summed", () => {
    const report = {
      ending: "complete" as const,
      rows: [
        { ...row, changeId: "001-01_a", costUsd: 1, tokens: 10, reviews: { reviews: 2, approved: 1, costUsd: 0.25, tokens: 40 } },
        { ...row, changeId: "001-02_b", costUsd: 1, tokens: 10 },
        { ...row, changeId: "001-03_c", costUsd: 1, tokens: 10, reviews: { reviews: 1, approved: 1, costUsd: null, tokens: 5 } }
      ]
    }
    assert.deepStrictEqual(sweepReviews(report), { reviews: 3, approved: 2, costUsd: 0.25, tokens: 45 })
  })

  it("are none when no change was reviewed", () => {
    assert.isNull(sweepReviews({ ending: "complete", rows: [{ ...row, changeId: "001-01_a", costUsd: null, tokens: null }] }))
  })
})
