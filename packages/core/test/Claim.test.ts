import { assert, describe, it } from "@effect/vitest"
import type { CompletionJudgement } from "../src/completion/CompletionJudge.js"
import { makeCapture } from "../src/harness/Capture.js"
import type { ReviewRecord } from "../src/domain/Domain.js"
import { type AgentRunEnd, agentRunEnd, checkedClaim, judgeClaim, reviewedClaim } from "../src/loop/Claim.js"
import { parseTasks } from "../src/prompt/Tasks.js"
import type { ReviewOutcome } from "../src/review/Review.js"
import type { CheckRun } from "../src/verify/CheckRunner.js"
import { rejectionNote } from "../src/verify/Verification.js"

const wentWell: AgentRunEnd = { cut: false, failed: false, failure: "" }
const claim: CompletionJudgement = {
  claimed: true,
  verdicts: [{ accepted: true, reason: "alone on its line", text: "<promise>COMPLETE</promise>" }],
  occurrences: 1
}
const mention: CompletionJudgement = {
  claimed: false,
  verdicts: [{ accepted: false, reason: "inside a sentence", text: "I print <promise>COMPLETE</promise> later" }],
  occurrences: 1
}
const options = { minIterations: 1, requireTasks: false, completionPromise: "COMPLETE" }
const noTasks = parseTasks(null)
const openTasks = parseTasks("- [x] 1.1 Write code\n- [ ] 1.2 Write docs\n- [ ] 1.3 Ship it\n")

describe("how an agent run ended", () => {
  it("tells a failed agent run from one cut short, and names what went wrong", () => {
    const capture = () => makeCapture("COMPLETE", "")
    const exited = Object.assign(capture(), { exitCode: 3 })
    assert.deepStrictEqual(agentRunEnd(exited, false), { cut: false, failed: true, failure: "exit code 3" })
    const killed = Object.assign(capture(), { exitCode: null, signal: "SIGTERM" })
    assert.deepStrictEqual(agentRunEnd(killed, false), { cut: false, failed: true, failure: "it was killed by SIGTERM" })
    const timedOut = Object.assign(capture(), { exitCode: 0, timedOut: true })
    assert.deepStrictEqual(agentRunEnd(timedOut, false), { cut: false, failed: true, failure: "it timed out" })
    const reported = Object.assign(capture(), { exitCode: 0, error: "quota gone" })
    assert.deepStrictEqual(agentRunEnd(reported, false), { cut: false, failed: true, failure: "the agent reported: quota gone" })
    // Interrupted, or stopped by a spend cap: cut short, not failed, whatever it exited with.
    assert.include(agentRunEnd(exited, true), { cut: true, failed: false })
    assert.include(agentRunEnd(Object.assign(capture(), { exitCode: 1, stopped: "max-cost" }), false), { cut: true, failed: false })
    assert.include(agentRunEnd(Object.assign(capture(), { exitCode: 0 }), false), { cut: false, failed: false })
  })
})

describe("judging a claim", () => {
  it("accepts a claim of an agent run that went well", () => {
    const judged = judgeClaim(wentWell, claim, options, 1, noTasks)
    assert.deepStrictEqual(judged, { claimed: true, accepted: true, verdicts: claim.verdicts, lines: [], notes: [], warnings: [] })
  })

  it("sets aside the claim of an agent run that failed, and tells the next prompt why", () => {
    const judged = judgeClaim({ cut: false, failed: true, failure: "exit code 2" }, claim, options, 4, noTasks)
    assert.isFalse(judged.claimed)
    assert.isFalse(judged.accepted)
    assert.deepStrictEqual(judged.verdicts.map((v) => [v.accepted, v.reason, v.text]), [[false, "the run failed", "<promise>COMPLETE</promise>"]])
    assert.deepStrictEqual(judged.notes, [
      "In iteration 4 you printed the completion promise, but the run failed (exit code 2), so the claim was set aside. " +
      "Fix the failure, check that everything passes, and only then claim completion again."
    ])
    assert.deepStrictEqual(judged.lines, [])
  })

  it("sets aside the claim of an agent run cut short, with nothing to tell the agent", () => {
    const judged = judgeClaim({ cut: true, failed: false, failure: "exit code 1" }, claim, options, 1, openTasks)
    assert.deepStrictEqual([judged.claimed, judged.accepted], [false, false])
    assert.deepStrictEqual(judged.verdicts.map((v) => v.reason), ["the run was cut short"])
    assert.deepStrictEqual([judged.notes, judged.lines, judged.warnings], [[], [], []])
  })

  it("does not let a claim below --min-iterations stand, and says the loop goes on", () => {
    const judged = judgeClaim(wentWell, claim, { ...options, minIterations: 3 }, 2, noTasks)
    assert.deepStrictEqual([judged.claimed, judged.accepted], [true, false])
    assert.deepStrictEqual(judged.lines, ["completion promise seen, but --min-iterations is 3: going on"])
    assert.deepStrictEqual(judged.notes, [])
    assert.isTrue(judgeClaim(wentWell, claim, { ...options, minIterations: 3 }, 3, noTasks).accepted)
  })

  it("refuses a claim with open tasks under --require-tasks, naming the first, and only warns of them otherwise", () => {
    const refused = judgeClaim(wentWell, claim, { ...options, requireTasks: true }, 2, openTasks)
    assert.deepStrictEqual([refused.claimed, refused.accepted], [true, false])
    assert.deepStrictEqual(refused.lines, ["completion refused: tasks.md still has 2 open tasks (--require-tasks)"])
    assert.deepStrictEqual(refused.notes, [
      "In iteration 2 your completion claim was refused: tasks.md still has 2 open tasks (the first: 1.2 Write docs). " +
      "Finish them, or mark them done or shelved in tasks.md, before you claim completion."
    ])
    assert.deepStrictEqual(refused.warnings, [])
    const warned = judgeClaim(wentWell, claim, options, 2, openTasks)
    assert.isTrue(warned.accepted)
    assert.deepStrictEqual(warned.warnings, ["the agent claims completion, but tasks.md still has 2 open tasks"])
    // Open tasks matter only to a claim that would stand.
    assert.deepStrictEqual(judgeClaim(wentWell, claim, { ...options, requireTasks: true, minIterations: 5 }, 2, openTasks).lines, [
      "completion promise seen, but --min-iterations is 5: going on"
    ])
  })

  it("tells the agent how a claim looks when it printed the promise without claiming", () => {
    const judged = judgeClaim(wentWell, mention, options, 2, noTasks)
    assert.deepStrictEqual([judged.claimed, judged.accepted], [false, false])
    assert.deepStrictEqual(judged.verdicts, mention.verdicts)
    assert.strictEqual(judged.notes.length, 1)
    assert.isTrue(judged.notes[0]!.startsWith(
      "In iteration 2 your completion promise was not accepted: \"I print <promise>COMPLETE</promise> later\" (inside a sentence). "
    ))
  })
})

describe("a claim after the checks", () => {
  const failed: CheckRun = { command: "pnpm test", exitCode: 1, signal: null, timedOut: false, durationMs: 1200, passed: false, output: "1 failed\n" }
  const passed: CheckRun = { ...failed, command: "pnpm lint", exitCode: 0, passed: true, output: "" }

  it("is rejected by a failed check, recorded as a claim set aside is (the check as the reason), which the next prompt names", () => {
    const judged = judgeClaim(wentWell, { ...claim, verdicts: [...claim.verdicts, ...mention.verdicts] }, options, 3, noTasks)
    const checked = checkedClaim(judged, { results: [passed, failed], failed }, ["pnpm lint", "pnpm test"], 3)
    assert.deepStrictEqual([checked.claimed, checked.accepted], [false, false])
    assert.deepStrictEqual(checked.verdicts.map((v) => [v.accepted, v.reason, v.text]), [
      [false, "verify failed: pnpm test (exit 1)", "<promise>COMPLETE</promise>"],
      [false, "inside a sentence", "I print <promise>COMPLETE</promise> later"]
    ])
    assert.strictEqual(checked.rejectedBy, failed)
    assert.deepStrictEqual(checked.notes, [rejectionNote(3, ["pnpm lint", "pnpm test"], failed)])
  })

  it("stands when every check passed, or when none ran", () => {
    const judged = judgeClaim(wentWell, claim, options, 3, noTasks)
    assert.deepStrictEqual(checkedClaim(judged, { results: [passed], failed: null }, ["pnpm lint"], 3), { ...judged, rejectedBy: null })
    assert.deepStrictEqual(checkedClaim(judged, null, [], 3), { ...judged, rejectedBy: null })
  })
})

describe("a claim after its review", () => {
  const judged = judgeClaim(wentWell, { ...claim, verdicts: [...claim.verdicts, ...mention.verdicts] }, options, 2, noTasks)
  const checked = checkedClaim(judged, null, [], 2)
  const record = (verdict: ReviewRecord["verdict"], findings: string | null): ReviewRecord => ({ reviewer: "codex", verdict, findings, durationMs: 10, usage: null })
  const outcome = (reviews: ReadonlyArray<ReviewRecord>, more: Partial<ReviewOutcome> = {}): ReviewOutcome => ({
    reviews,
    approved: false,
    stopped: null,
    gaveUp: null,
    ...more
  })
  const setAside = (reason: string) => [[false, reason, "<promise>COMPLETE</promise>"], [false, "inside a sentence", "I print <promise>COMPLETE</promise> later"]]
  const verdictsOf = (reviewed: { readonly verdicts: ReadonlyArray<{ accepted: boolean; reason: string; text: string }> }) =>
    reviewed.verdicts.map((v) => [v.accepted, v.reason, v.text])

  it("is rejected when the reviewer did not give a verdict, with no findings, and the next prompt says the review did not approve it", () => {
    const reviewed = reviewedClaim(checked, outcome([record("none", "no verdict line")]), 2)
    assert.deepStrictEqual([reviewed.claimed, reviewed.accepted, reviewed.rejected], [false, false, true])
    assert.deepStrictEqual(reviewed.findings, [])
    assert.deepStrictEqual(verdictsOf(reviewed), setAside("review by codex: not approved: no verdict line"))
    assert.deepStrictEqual(reviewed.notes, [
      "In iteration 2 your claim passed the checks, but its review did not approve it (review by codex: not approved: no verdict line). " +
      "Check your work against the proposal and its tasks, and claim completion again when it is done."
    ])
  })

  it("is set aside but not counted as a rejection when a guard stopped the review, or a reviewer's usage limit ended the loop", () => {
    const stopped = reviewedClaim(checked, outcome([record("failed", "stopped: max-cost")], { stopped: "max-cost" }), 3)
    const gaveUp = reviewedClaim(checked, outcome([record("limited", "rate limited")], {
      gaveUp: { limit: "rate limited", plan: { _tag: "GiveUp", resumeAt: null, why: "the usage limit does not reset by waiting" } }
    }), 3)
    for (const reviewed of [stopped, gaveUp]) {
      assert.deepStrictEqual([reviewed.claimed, reviewed.accepted, reviewed.rejected], [false, false, false])
      assert.deepStrictEqual([reviewed.findings, reviewed.notes], [[], []])
    }
    assert.deepStrictEqual(verdictsOf(stopped), setAside("review by codex: failed: stopped: max-cost"))
    assert.deepStrictEqual(verdictsOf(gaveUp), setAside("review by codex: not given: its usage limit (rate limited)"))
  })

  it("is set aside as not reviewed when no reviewer ran, without counting as a rejection", () => {
    const reviewed = reviewedClaim(checked, outcome([]), 4)
    assert.deepStrictEqual([reviewed.claimed, reviewed.accepted, reviewed.rejected], [false, false, false])
    assert.deepStrictEqual(verdictsOf(reviewed), setAside("not reviewed"))
    assert.deepStrictEqual([reviewed.reviews, reviewed.findings, reviewed.notes], [[], [], []])
  })
})
