import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { LoopResult } from "../src/loop/LoopResult.js"
import { awaitingApprovalNote, mergeNoteOf, runSweep, type SweepReport, type SweepRunner } from "../src/sweep/Sweep.js"
import { type ChangeCandidate, type Readiness, readiness, sweepEnding } from "../src/sweep/SweepPolicy.js"

// A person before a merge (`--approve`): what waits, what is merged, what runs again, and how the sweep ends.

const change = (patch: Partial<ChangeCandidate> = {}): ChangeCandidate => ({
  id: "a",
  archived: false,
  hasProposal: true,
  loopStatus: "complete",
  tasks: null,
  merge: null,
  ...patch
})

const ended = (status: LoopResult["status"]): LoopResult => ({ run: "run-1", status, reason: "complete", iterations: 1, message: `${status}: ended`, resumeAt: null })

const facts = (changeId: string) => ({ iterations: 1, costUsd: null, tokens: null, branch: `spool/${changeId}`, lastCommit: `commit-of-${changeId}`, agents: [] })

const plan = (ids: ReadonlyArray<string>, readiness: Record<string, Readiness> = {}) => ({
  changes: ids.map((id) => ({ id, readiness: readiness[id] ?? ({ _tag: "Ready" } as const) })),
  concurrency: 1
})

/** A runner whose loops complete, noting what ran, was merged and came to wait. */
const approving = (merging: boolean, approve: boolean) => {
  const seen = { ran: [] as Array<string>, merged: [] as Array<string>, waiting: [] as Array<string> }
  const runner: SweepRunner<Error> = {
    runChange: (id) => Effect.sync(() => void seen.ran.push(id)).pipe(Effect.as(ended("complete"))),
    facts: (id) => Effect.succeed(facts(id)),
    merge: merging ? (id) => Effect.sync(() => (seen.merged.push(id), { merged: true, text: `merged ${id}` })) : null,
    awaitApproval: approve ? (id) => Effect.sync(() => void seen.waiting.push(id)) : null
  }
  return { seen, runner }
}

const noReport = (_: SweepReport) => Effect.void

describe("readiness with a person's approval", () => {
  it("a completed change awaiting approval waits, whatever its tasks and merge say", () => {
    assert.deepStrictEqual(readiness(change({ approval: "awaiting", merge: awaitingApprovalNote, tasks: { complete: 1, shelved: 0, total: 1 } })), {
      _tag: "AwaitingApproval",
      why: "awaiting approval"
    })
  })

  it("an approved change is merged again as one not merged; a rejected one is ready, even with every task done", () => {
    const approved = { decision: "approved", run: "r", at: "t" } as const
    assert.deepStrictEqual(readiness(change({ approval: "approved", merge: mergeNoteOf(approved) })), { _tag: "Unmerged", why: "approved, not merged yet" })
    assert.deepStrictEqual(readiness(change({ approval: "rejected", tasks: { complete: 2, shelved: 0, total: 2 } })), { _tag: "Ready" })
    assert.deepStrictEqual(readiness(change({ approval: "approved", merge: { merged: true, text: "merged into main (0123abcd)" } })), {
      _tag: "Complete",
      why: "its loop completed"
    })
  })

  it("a word on an earlier run says nothing of a loop that has not completed", () => {
    assert.deepStrictEqual(readiness(change({ loopStatus: "failed", approval: "awaiting" })), { _tag: "Ready" })
  })

  it("a rejection on an earlier run says nothing of a loop that has not completed either: its ticked tasks still count", () => {
    assert.deepStrictEqual(readiness(change({ loopStatus: "failed", approval: "rejected", tasks: { complete: 2, shelved: 0, total: 2 } })), {
      _tag: "Complete",
      why: "every task is done"
    })
  })

  it("says a rejection with its why, and one without; none of the words is a merge made", () => {
    assert.deepStrictEqual(mergeNoteOf({ decision: "rejected", run: "r", at: "t", why: "too rough" }), { merged: false, text: "rejected: too rough" })
    assert.deepStrictEqual(mergeNoteOf({ decision: "rejected", run: "r", at: "t" }), { merged: false, text: "rejected: no reason given" })
    assert.deepStrictEqual(mergeNoteOf({ decision: "approved", run: "r", at: "t" }), { merged: false, text: "approved, not merged yet" })
    assert.strictEqual(mergeNoteOf({ decision: "awaiting", run: "r", at: "t" }), awaitingApprovalNote)
    assert.deepStrictEqual(awaitingApprovalNote, { merged: false, text: "awaiting approval" })
  })
})

describe("sweepEnding with changes awaiting approval", () => {
  it("ends awaiting approval only when nothing else needs acting on", () => {
    assert.strictEqual(sweepEnding(["complete", "already-complete"], 0, 1), "awaiting-approval")
    assert.strictEqual(sweepEnding(["complete", "deadline"], 0, 1), "deadline")
    assert.strictEqual(sweepEnding(["complete", "usage-limit"], 0, 1), "usage-limit")
    assert.strictEqual(sweepEnding(["complete", "complete"], 1, 1), "not-merged")
    assert.strictEqual(sweepEnding(["complete"], 0, 0), "complete")
  })
})

describe("runSweep with --approve", () => {
  it.effect("keeps a completed change from its merge and says it waits", () =>
    Effect.gen(function*() {
      const { runner, seen } = approving(true, true)
      const result = yield* runSweep(plan(["a"]), runner, noReport)
      assert.deepStrictEqual([seen.ran, seen.waiting, seen.merged], [["a"], ["a"], []])
      assert.deepStrictEqual([result.rows[0]!.merge, result.rows[0]!.awaitingApproval], [awaitingApprovalNote, true])
      assert.strictEqual(result.ending, "awaiting-approval")
    }))

  it.effect("merges an approved change without running it, and lists one still waiting as waiting", () =>
    Effect.gen(function*() {
      const { runner, seen } = approving(true, true)
      const result = yield* runSweep(
        plan(["a", "b"], { a: { _tag: "Unmerged", why: "approved, not merged yet" }, b: { _tag: "AwaitingApproval", why: "awaiting approval" } }),
        runner,
        noReport
      )
      assert.deepStrictEqual([seen.ran, seen.merged], [[], ["a"]])
      assert.deepStrictEqual(result.rows[1], {
        changeId: "b", outcome: "already-complete", message: "already complete: its loop completed", durationMs: 0, merge: awaitingApprovalNote,
        awaitingApproval: true, iterations: 0, costUsd: null, tokens: null, branch: "spool/b", lastCommit: "commit-of-b", agents: []
      })
      assert.strictEqual(result.ending, "awaiting-approval")
    }))

  it.effect("without --merge, nothing waits: a change awaiting approval is already complete, and the sweep complete", () =>
    Effect.gen(function*() {
      const { runner, seen } = approving(false, true)
      const result = yield* runSweep(plan(["a", "b"], { b: { _tag: "AwaitingApproval", why: "awaiting approval" } }), runner, noReport)
      assert.deepStrictEqual([seen.ran, seen.waiting], [["a"], []])
      assert.strictEqual(result.rows[1]!.message, "already complete: its loop completed; awaiting approval")
      assert.strictEqual(result.ending, "complete")
    }))
})
