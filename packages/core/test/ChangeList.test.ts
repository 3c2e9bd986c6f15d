import { assert, describe, it } from "@effect/vitest"
import { listChange, listChanges, type ListInput } from "../src/sweep/ChangeList.js"
import type { ChangeCandidate } from "../src/sweep/SweepPolicy.js"

const candidate = (overrides: Partial<ChangeCandidate> = {}): ChangeCandidate => ({
  id: "001-01_a",
  archived: false,
  hasProposal: true,
  loopStatus: null,
  tasks: { complete: 1, shelved: 0, total: 4 },
  merge: null,
  ...overrides
})
const input = (overrides: Partial<ChangeCandidate> = {}, extra: Partial<ListInput> = {}): ListInput => ({
  candidate: candidate(overrides),
  lastRun: null,
  holder: null,
  ...extra
})

describe("a change as --list shows it", () => {
  it("is ready when a new loop may start on it, with its tasks done of total", () => {
    assert.deepStrictEqual(listChange(input()), {
      id: "001-01_a",
      ready: true,
      state: "ready",
      why: null,
      merge: null,
      approval: null,
      lastStatus: null,
      iteration: 0,
      maxIterations: null,
      holder: null,
      leaseExpiresAt: null,
      tasks: { done: 1, shelved: 0, total: 4 },
      resumeAt: null
    })
  })

  it("is running, not ready, while someone holds it, naming the holder and when its lease lapses", () => {
    const listed = listChange(input({}, {
      holder: { name: "pid 7 on ci-1", expiresAt: "2026-11-27T10:15:00.000Z" },
      lastRun: { status: "running", iteration: 3, maxIterations: 20, resumeAt: null }
    }))
    assert.deepInclude(listed, { ready: false, state: "running", holder: "pid 7 on ci-1", leaseExpiresAt: "2026-11-27T10:15:00.000Z", lastStatus: "running", iteration: 3, maxIterations: 20 })
  })

  it("is complete when its loop completed or every task is done, saying which", () => {
    assert.deepInclude(listChange(input({ loopStatus: "complete" })), { ready: false, state: "complete", why: "its loop completed" })
    assert.deepInclude(listChange(input({ tasks: { complete: 2, shelved: 0, total: 2 } })), { ready: false, state: "complete", why: "every task is done" })
    // A shelved task is done too: it holds the change open no more.
    assert.deepInclude(listChange(input({ tasks: { complete: 1, shelved: 1, total: 2 } })), {
      state: "complete",
      why: "every task is done",
      tasks: { done: 2, shelved: 1, total: 2 }
    })
  })

  it("is complete and not ready when its loop completed but its merge was not made, saying why, with the merge as it was", () => {
    const merge = { merged: false, text: "not merged: conflict in shared.txt" }
    assert.deepInclude(listChange(input({ loopStatus: "complete", merge })), { ready: false, state: "complete", why: "not merged: conflict in shared.txt", merge })
    const merged = { merged: true, text: "merged into main (0123abcd)" }
    assert.deepInclude(listChange(input({ loopStatus: "complete", merge: merged })), { ready: false, state: "complete", why: "its loop completed", merge: merged })
  })

  it("is complete and not ready while its merge awaits a person's approval", () => {
    const merge = { merged: false, text: "awaiting approval" }
    assert.deepInclude(listChange(input({ loopStatus: "complete", approval: "awaiting", merge })), {
      ready: false,
      state: "complete",
      why: "awaiting approval",
      approval: "awaiting"
    })
  })

  it("goes on being ready after a run that stopped short, with when to run it again after a usage limit", () => {
    const listed = listChange(input({ loopStatus: "usage-limit" }, { lastRun: { status: "usage-limit", iteration: 4, maxIterations: 20, resumeAt: "2026-11-27T12:00:00.000Z" } }))
    assert.deepInclude(listed, { ready: true, state: "ready", lastStatus: "usage-limit", resumeAt: "2026-11-27T12:00:00.000Z" })
  })

  it("is ready again after its reviewers turned it down, every task ticked or not, its last run saying how it ended", () => {
    const listed = listChange(input({ loopStatus: "review-rejected", tasks: { complete: 4, shelved: 0, total: 4 } }, {
      lastRun: { status: "review-rejected", iteration: 6, maxIterations: 20, resumeAt: null }
    }))
    assert.deepInclude(listed, { ready: true, state: "ready", why: null, lastStatus: "review-rejected", iteration: 6, tasks: { done: 4, shelved: 0, total: 4 } })
    // Another ending with every task ticked is complete.
    assert.deepInclude(listChange(input({ loopStatus: "max-iterations", tasks: { complete: 4, shelved: 0, total: 4 } })), { ready: false, state: "complete" })
  })

  it("is archived, or not ready without a proposal, and a task list with no task says nothing", () => {
    assert.deepInclude(listChange(input({ archived: true, tasks: null })), { ready: false, state: "archived", why: null, tasks: null })
    assert.deepInclude(listChange(input({ hasProposal: false })), { ready: false, state: "not-ready", why: "no proposal.md" })
    assert.deepInclude(listChange(input({ hasProposal: false, proposal: "spec.md" })), { ready: false, state: "not-ready", why: "no spec.md" })
    assert.strictEqual(listChange(input({ tasks: { complete: 0, shelved: 0, total: 0 } })).tasks, null)
  })

  it("lists changes in id order, archived ones last", () => {
    const ids = listChanges([
      input({ id: "002-01_b" }),
      input({ id: "000-01_old", archived: true }),
      input({ id: "001-01_a" }),
      input({ id: "001-02_c", archived: true })
    ]).map((c) => c.id)
    assert.deepStrictEqual(ids, ["001-01_a", "002-01_b", "000-01_old", "001-02_c"])
    const shuffled = listChanges([
      input({ id: "002-01_b" }),
      input({ id: "005-01_e", archived: true }),
      input({ id: "001-01_a" }),
      input({ id: "004-01_d", archived: true }),
      input({ id: "003-01_c" })
    ]).map((c) => c.id)
    assert.deepStrictEqual(shuffled, ["001-01_a", "002-01_b", "003-01_c", "004-01_d", "005-01_e"])
  })
})
