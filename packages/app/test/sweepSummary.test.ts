import { describe, expect, it } from "@effect/vitest"
import type { AgentNote, SweepRow } from "@spool/core"
import { describeSpend, sweepSummary } from "../src/sweep/SweepSummary.js"

const row = (changeId: string, patch: Partial<SweepRow> = {}): SweepRow => ({
  changeId,
  outcome: "complete",
  message: null,
  durationMs: 62_000,
  merge: null,
  iterations: 3,
  costUsd: null,
  tokens: null,
  branch: null,
  lastCommit: null,
  agents: [],
  ...patch
})

const note = (agent: string, harness: string, fields: Partial<AgentNote> = {}): AgentNote =>
  ({ agent, harness, model: null, iterations: 0, costUsd: null, tokens: 0, limitedUntil: null, ...fields })

describe("the sweep's summary", () => {
  it("words spend as the agent reported it, money as spool writes it everywhere", () => {
    expect(describeSpend({ costUsd: 0.42, tokens: 15_200 })).toBe("$0.42, 15.2k tokens")
    expect(describeSpend({ costUsd: 0.042, tokens: null })).toBe("$0.0420")
    expect(describeSpend({ costUsd: null, tokens: 900 })).toBe("900 tokens")
    expect(describeSpend({ costUsd: null, tokens: null })).toBe("-")
  })

  it("has a line a change in the sweep's order, the totals, and why the others did not complete", () => {
    const lines = sweepSummary({
      ending: "failed",
      rows: [
        row("001-01_alpha", { costUsd: 0.25, tokens: 2000, branch: "spool/001-01_alpha", lastCommit: "0123456789abcdef", merge: { merged: true, text: "merged into main (01234567)" } }),
        row("001-02_beta", { outcome: "failed", iterations: 2, costUsd: 0.5, tokens: 1000, message: "3 iterations failed in a row" }),
        row("001-03_gamma", { outcome: "busy", iterations: 0, durationMs: 0, message: "a loop is already running on 001-03_gamma" })
      ]
    }, { merge: "main" })
    expect(lines).toEqual([
      "",
      "=== sweep: 3 changes: 1 complete, 1 failed, 1 busy ===",
      "change        outcome   iterations  duration  spend               branch              last commit   merge",
      "001-01_alpha  complete  3           1m02s     $0.25, 2.0k tokens  spool/001-01_alpha  0123456789ab  merged into main (01234567)",
      "001-02_beta   failed    2           1m02s     $0.50, 1.0k tokens  -                   -             -",
      "001-03_gamma  busy      -           -         -                   -                   -             -",
      "total: 5 iterations, $0.75, 3.0k tokens, 1 merged into main",
      "why:",
      "  001-02_beta: 3 iterations failed in a row",
      "  001-03_gamma: a loop is already running on 001-03_gamma"
    ])
  })

  it("counts a completed change left unmerged as not merged in the headline, and says why, a change merged again too", () => {
    const lines = sweepSummary({
      ending: "not-merged",
      rows: [
        row("001-01_alpha", { merge: { merged: true, text: "merged into main (01234567)" } }),
        row("001-02_beta", { merge: { merged: false, text: "not merged: conflict in shared.txt" }, message: "complete: the promise was accepted at iteration 3" }),
        row("001-03_gamma", { outcome: "already-complete", iterations: 0, message: "already complete: its loop completed", merge: { merged: false, text: "not merged: pnpm test failed on the merged tree" } }),
        row("001-04_delta", { outcome: "already-complete", iterations: 0, message: "already complete: its loop completed", merge: { merged: true, text: "already in main" } })
      ]
    }, { merge: "main" })
    expect(lines[1]).toBe("=== sweep: 4 changes: 1 complete, 2 not merged, 1 already complete ===")
    expect(lines.slice(-5)).toEqual([
      "total: 6 iterations, 2 merged into main",
      "why:",
      "  001-02_beta: not merged: conflict in shared.txt",
      "  001-03_gamma: not merged: pnpm test failed on the merged tree",
      "  001-04_delta: already complete: its loop completed"
    ])
  })

  it("leaves the merge column out when the sweep merges nothing", () => {
    const lines = sweepSummary({ ending: "complete", rows: [row("001-01_alpha")] }, { merge: null })
    expect(lines[2]).toBe("change        outcome   iterations  duration  spend  branch  last commit")
    expect(lines.at(-1)).toBe("total: 3 iterations")
  })

  it("gives each agent's iterations and spend over the sweep when a loop had several agents, and none otherwise", () => {
    const lines = sweepSummary({
      ending: "complete",
      rows: [
        row("001-01_alpha", { iterations: 3, costUsd: 0.8, agents: [note("claude", "claude", { iterations: 2, costUsd: 0.8, tokens: 4000 }), note("codex:gpt-5.5", "codex", { iterations: 1 })] }),
        row("001-02_beta", { iterations: 2, costUsd: 0.4, agents: [note("claude", "claude", { iterations: 1, costUsd: 0.4, tokens: 2000 }), note("codex:gpt-5.5", "codex", { iterations: 1 })] }),
        row("001-03_gamma", { outcome: "not-started", iterations: 0 })
      ]
    }, { merge: null })
    expect(lines.slice(-2)).toEqual([
      "total: 5 iterations, $1.20",
      "agents: claude 3 iterations $1.20, codex:gpt-5.5 2 iterations (cost unknown)"
    ])
    const one = sweepSummary({ ending: "complete", rows: [row("001-01_alpha", { agents: [note("claude", "claude", { iterations: 3 })] })] }, { merge: null })
    expect(one.at(-1)).toBe("total: 3 iterations")
  })

  it("gives the reviews and the reviewers' spend over the sweep after the totals, apart from the agents', only when there were reviews", () => {
    const lines = sweepSummary({
      ending: "review-rejected",
      rows: [
        row("001-01_alpha", { costUsd: 1, reviews: { reviews: 2, approved: 1, costUsd: 0.25, tokens: 3000 } }),
        row("001-02_beta", { outcome: "review-rejected", costUsd: 0.5, message: "review-rejected: the reviewers turned the claim down 2 times", reviews: { reviews: 2, approved: 1, costUsd: 0.15, tokens: null } }),
        row("001-03_gamma", { costUsd: 0.2 })
      ]
    }, { merge: null })
    expect(lines[1]).toBe("=== sweep: 3 changes: 2 complete, 1 review rejected ===")
    expect(lines.slice(-4)).toEqual([
      "total: 9 iterations, $1.70",
      "reviews: 4 (2 approved), $0.40, 3.0k tokens",
      "why:",
      "  001-02_beta: review-rejected: the reviewers turned the claim down 2 times"
    ])
    const unreported = sweepSummary({ ending: "complete", rows: [row("001-01_alpha", { reviews: { reviews: 1, approved: 1, costUsd: null, tokens: null } })] }, { merge: null })
    expect(unreported.at(-1)).toBe("reviews: 1 (1 approved), cost unknown")
    const none = sweepSummary({ ending: "complete", rows: [row("001-01_alpha")] }, { merge: null })
    expect(none.some((line) => line.startsWith("reviews:"))).toBe(false)
  })
})
