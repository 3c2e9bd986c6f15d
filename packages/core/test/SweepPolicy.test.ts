import { assert, describe, it } from "@effect/vitest"
import { type ChangeCandidate, readiness, sweepChanges, sweepEnding } from "../src/sweep/SweepPolicy.js"

const change = (id: string, patch: Partial<ChangeCandidate> = {}): ChangeCandidate => ({
  id,
  archived: false,
  hasProposal: true,
  loopStatus: null,
  tasks: null,
  merge: null,
  ...patch
})

describe("readiness", () => {
  it("an active change with a proposal and no loop yet is ready, with or without tasks", () => {
    assert.deepStrictEqual(readiness(change("001-01_a")), { _tag: "Ready" })
    assert.deepStrictEqual(readiness(change("001-01_a", { tasks: { complete: 2, shelved: 0, total: 3 } })), { _tag: "Ready" })
  })

  it("a change whose loop completed is complete, whatever its tasks say", () => {
    assert.deepStrictEqual(readiness(change("a", { loopStatus: "complete", tasks: { complete: 1, shelved: 0, total: 3 } })), {
      _tag: "Complete",
      why: "its loop completed"
    })
  })

  it("a change whose loop completed in a --merge sweep is unmerged until its merge is made, whatever its tasks say", () => {
    const unmerged = { merged: false, text: "not merged: conflict in shared.txt" }
    assert.deepStrictEqual(readiness(change("a", { loopStatus: "complete", merge: unmerged, tasks: { complete: 2, shelved: 0, total: 2 } })), {
      _tag: "Unmerged",
      why: "not merged: conflict in shared.txt"
    })
    assert.deepStrictEqual(readiness(change("a", { loopStatus: "complete", merge: { merged: true, text: "merged into main (0123abcd)" } })), {
      _tag: "Complete",
      why: "its loop completed"
    })
    // A merge note of an earlier run says nothing of a loop that has not completed.
    assert.deepStrictEqual(readiness(change("a", { loopStatus: "failed", merge: unmerged })), { _tag: "Ready" })
  })

  it("a change every task of which is done is complete; a tasks.md with no task says nothing", () => {
    assert.deepStrictEqual(readiness(change("a", { tasks: { complete: 2, shelved: 0, total: 2 } })), { _tag: "Complete", why: "every task is done" })
    assert.deepStrictEqual(readiness(change("a", { tasks: { complete: 0, shelved: 0, total: 0 } })), { _tag: "Ready" })
    // Shelved tasks are done: complete and shelved ones together leave nothing open; one pending task holds it open.
    assert.deepStrictEqual(readiness(change("a", { tasks: { complete: 1, shelved: 1, total: 2 } })), { _tag: "Complete", why: "every task is done" })
    assert.deepStrictEqual(readiness(change("a", { tasks: { complete: 1, shelved: 1, total: 3 } })), { _tag: "Ready" })
  })

  it("a loop that ended any other way leaves the change ready", () => {
    for (const status of ["failed", "max-iterations", "stopped", "usage-limit", "interrupted", "running", "waiting"] as const) {
      assert.deepStrictEqual(readiness(change("a", { loopStatus: status })), { _tag: "Ready" }, status)
    }
  })

  it("archived changes and changes without a proposal are not ready", () => {
    assert.deepStrictEqual(readiness(change("a", { archived: true })), { _tag: "NotReady", why: "archived" })
    assert.deepStrictEqual(readiness(change("a", { hasProposal: false })), { _tag: "NotReady", why: "no proposal.md" })
    assert.deepStrictEqual(readiness(change("a", { hasProposal: false, proposal: "spec.md" })), { _tag: "NotReady", why: "no spec.md" })
    assert.deepStrictEqual(readiness(change("a", { proposal: "spec.md" })), { _tag: "Ready" })
  })
})

describe("sweepChanges", () => {
  const all = [
    change("002-01_c"),
    change("001-02_b", { loopStatus: "complete" }),
    change("001-01_a"),
    change("000-01_old", { archived: true }),
    change("001-03_d", { tasks: { complete: 1, shelved: 0, total: 1 } })
  ]

  it("takes every active change in change-id order, each with its readiness", () => {
    const taken = sweepChanges(all, { _tag: "AllReady" })
    assert.deepStrictEqual(taken.map((t) => t.change.id), ["001-01_a", "001-02_b", "001-03_d", "002-01_c"])
    assert.deepStrictEqual(taken.map((t) => t.readiness._tag), ["Ready", "Complete", "Complete", "Ready"])
  })

  it("takes a module's changes only", () => {
    assert.deepStrictEqual(sweepChanges(all, { _tag: "Module", moduleId: "002" }).map((t) => t.change.id), ["002-01_c"])
    assert.deepStrictEqual(sweepChanges(all, { _tag: "Module", moduleId: "009" }), [])
  })

  it("takes named changes in the order given, each once, never an archived one", () => {
    const taken = sweepChanges(all, { _tag: "Named", ids: ["002-01_c", "001-01_a", "002-01_c", "000-01_old"] })
    assert.deepStrictEqual(taken.map((t) => t.change.id), ["002-01_c", "001-01_a"])
  })
})

describe("sweepEnding", () => {
  it("is complete when every change the sweep ran completed; skipped changes do not count against it", () => {
    assert.strictEqual(sweepEnding(["complete", "busy", "already-complete", "complete"]), "complete")
    assert.strictEqual(sweepEnding([]), "complete")
  })

  it("names the ending a person must act on first", () => {
    assert.strictEqual(sweepEnding(["complete", "usage-limit", "max-iterations"]), "max-iterations")
    assert.strictEqual(sweepEnding(["max-iterations", "stopped"]), "stopped")
    assert.strictEqual(sweepEnding(["stopped", "failed", "usage-limit"]), "failed")
    assert.strictEqual(sweepEnding(["failed", "interrupted", "not-started"]), "interrupted")
    assert.strictEqual(sweepEnding(["complete", "usage-limit", "not-started"]), "usage-limit")
    assert.strictEqual(sweepEnding(["complete", "stopped"], 1), "not-merged")
    assert.strictEqual(sweepEnding(["complete", "failed"], 1), "failed")
    assert.strictEqual(sweepEnding(["complete", "complete"], 0), "complete")
  })
})
