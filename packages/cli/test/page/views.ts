/** Views as spool sends them, typed as core's, for the page's tests. */
import type { DashboardDetail, DashboardIteration, DashboardLoop } from "@spool/core"

export const loopOf = (changeId: string, fields: Partial<DashboardLoop> = {}): DashboardLoop => ({
  changeId,
  status: "running",
  iteration: 2,
  maxIterations: 12,
  elapsedMs: 65_000,
  spend: { costUsd: 0.125, tokens: 5000 },
  tasks: { complete: 1, shelved: 0, total: 4 },
  lastOutcome: "continue",
  notMerged: null,
  branch: "spool/" + changeId,
  updatedAt: new Date().toISOString(),
  problem: null,
  ...fields
})

export const iterationOf = (iteration: number, fields: Partial<DashboardIteration> = {}): DashboardIteration => ({
  run: "r1",
  iteration,
  startedAt: "2025-01-01T10:00:00.000Z",
  outcome: "continue",
  durationMs: 1000 * iteration,
  exitCode: 0,
  signal: null,
  costUsd: 0.01 * iteration,
  tokens: 100 * iteration,
  changedFiles: iteration,
  commit: "abcdef1234567890",
  checks: [],
  error: null,
  agent: null,
  reviews: [],
  ...fields
})

export const detailOf = (changeId: string, fields: Partial<DashboardDetail> = {}): DashboardDetail => ({
  loop: loopOf(changeId),
  run: "r1",
  startedAt: "2025-01-01T10:00:00.000Z",
  worktree: null,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  sandbox: null,
  agent: null,
  agents: [],
  reviews: null,
  iterations: [iterationOf(1)],
  journal: { text: "", truncated: false },
  output: { run: "r1", iteration: 2, text: "line one\n", truncated: false },
  ...fields
})

/** The page's shell, as `pageHtml` serves it. */
export const shell = () => {
  document.body.innerHTML = `<header class="top"><div class="brand"><span class="mark">spool</span><span class="repo" id="repo"></span></div>
<div class="connection connecting" id="connection" role="status"><span class="dot"></span><span class="label">connecting</span></div></header>
<main id="app"><p class="loading">Loading the loops…</p></main>`
  return document.getElementById("app")!
}
