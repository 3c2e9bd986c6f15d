import type { CompletionJudgement } from "../completion/CompletionJudge.js"
import type { Verdict } from "../completion/CompletionRule.js"
import type { LoopOptions, ReviewRecord } from "../domain/Domain.js"
import { reviewLine, type ReviewOutcome } from "../review/Review.js"
import type { Capture } from "../harness/Capture.js"
import { currentTask, openTaskCount, type TaskList } from "../prompt/Tasks.js"
import { oneLine } from "../text/Text.js"
import type { CheckRun } from "../verify/CheckRunner.js"
import { checkFailure, rejectionNote, type Verification } from "../verify/Verification.js"
import { SET_ASIDE } from "./LoopFormat.js"

/** How the agent run ended, as far as its claim goes. */
export interface AgentRunEnd {
  /** Interrupted, or stopped by a guard or a usage limit: not failed, but its claim is set aside. */
  readonly cut: boolean
  /** It timed out, was killed, exited non-zero or reported a failure: its claim is set aside. */
  readonly failed: boolean
  /** What went wrong, as the next prompt says it (read when it failed). */
  readonly failure: string
}

const describeFailure = (capture: AgentRunCapture) =>
  capture.timedOut
    ? "it timed out"
    : capture.signal !== null
    ? `it was killed by ${capture.signal}`
    : capture.exitCode !== 0
    ? `exit code ${capture.exitCode}`
    : `the agent reported: ${capture.error}`

type AgentRunCapture = Pick<Capture, "timedOut" | "signal" | "exitCode" | "error" | "stopped" | "limited">

/** How the agent run `capture` holds ended; `interrupted` when Ctrl-C stopped it. */
export const agentRunEnd = (capture: AgentRunCapture, interrupted: boolean): AgentRunEnd => {
  const cut = interrupted || capture.stopped !== null || capture.limited !== null
  return {
    cut,
    failed: !cut && (capture.timedOut || capture.signal !== null || capture.exitCode !== 0 || capture.error !== null),
    failure: describeFailure(capture)
  }
}

/** What became of the agent's claim of completion, and what the loop says about it. */
export interface ClaimJudgement {
  /** The agent claimed completion in an agent run that neither failed nor was cut short. */
  readonly claimed: boolean
  /** The claim stands (so far: the checks, when there are some, have the last word). */
  readonly accepted: boolean
  /** Every promise the agent printed and how it was judged; a claim set aside says why. */
  readonly verdicts: ReadonlyArray<Verdict>
  /** What the loop prints about the claim. */
  readonly lines: ReadonlyArray<string>
  /** What the next prompt tells the agent about it. */
  readonly notes: ReadonlyArray<string>
  /** What the iteration's record warns of. */
  readonly warnings: ReadonlyArray<string>
}

/** What the next prompt tells the agent about a promise that was not taken as a claim. */
const ignoredPromiseNote = (iteration: number, verdict: Verdict, token: string) =>
  `In iteration ${iteration} your completion promise was not accepted: "${oneLine(verdict.text, 160)}" (${verdict.reason}). ` +
  `When, and only when, everything is done, print <promise>${token}</promise> alone on its own line, ` +
  "after a sentence that says the work is complete; a promise inside a sentence, deferred, quoted or in code is not a claim."

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/**
 * Judges the agent's claim once its agent run is over: a failed or cut-short agent run never
 * completes the loop, whatever it claimed (its claim is recorded as set aside); a claim before
 * `--min-iterations`, or with tasks open under `--require-tasks`, does not stand either.
 * `tasksAfter` is tasks.md as the agent left it.
 */
export const judgeClaim = (
  agentRun: AgentRunEnd,
  judgement: CompletionJudgement,
  options: Pick<LoopOptions, "minIterations" | "requireTasks" | "completionPromise">,
  iteration: number,
  tasksAfter: TaskList
): ClaimJudgement => {
  const claimed = judgement.claimed && !agentRun.failed && !agentRun.cut
  const verdicts = claimed || !judgement.claimed
    ? judgement.verdicts
    : judgement.verdicts.map((v) => (v.accepted ? { ...v, accepted: false, reason: agentRun.failed ? SET_ASIDE.failed : SET_ASIDE.cut } : v))
  let accepted = claimed && iteration >= options.minIterations
  const lines: Array<string> = []
  const notes: Array<string> = []
  const warnings: Array<string> = []
  if (claimed && !accepted) {
    lines.push(`completion promise seen, but --min-iterations is ${options.minIterations}: going on`)
  }
  if (judgement.claimed && agentRun.failed) {
    notes.push(
      `In iteration ${iteration} you printed the completion promise, but the run failed (${agentRun.failure}), ` +
        "so the claim was set aside. Fix the failure, check that everything passes, and only then claim completion again."
    )
  }
  if (!judgement.claimed && verdicts.length > 0) {
    notes.push(ignoredPromiseNote(iteration, verdicts[0]!, options.completionPromise))
  }
  const open = accepted ? openTaskCount(tasksAfter) : 0
  if (open > 0 && options.requireTasks) {
    accepted = false
    const refusal = `tasks.md still has ${plural(open, "open task")}`
    lines.push(`completion refused: ${refusal} (--require-tasks)`)
    const first = currentTask(tasksAfter)
    notes.push(
      `In iteration ${iteration} your completion claim was refused: ${refusal}` +
        `${first === null ? "" : ` (the first: ${first.id} ${first.description})`}. ` +
        "Finish them, or mark them done or shelved in tasks.md, before you claim completion."
    )
  } else if (open > 0) {
    warnings.push(`the agent claims completion, but tasks.md still has ${plural(open, "open task")}`)
  }
  return { claimed, accepted, verdicts, lines, notes, warnings }
}

/**
 * A claim after the project's checks (`--verify`): one they rejected no longer stands, is recorded as
 * a claim set aside is (not taken, its promise not accepted, with the failed check as the reason),
 * and the next prompt says why.
 */
export interface CheckedClaim extends ClaimJudgement {
  /** The check that failed, rejecting the claim. */
  readonly rejectedBy: CheckRun | null
}

/** `claim` as the checks left it; `verification` is null when none ran. */
export const checkedClaim = (
  claim: ClaimJudgement,
  verification: Verification | null,
  commands: ReadonlyArray<string>,
  iteration: number
): CheckedClaim => {
  const rejectedBy = verification?.failed ?? null
  if (rejectedBy === null) return { ...claim, rejectedBy }
  const reason = checkFailure(rejectedBy)
  return {
    ...claim,
    claimed: false,
    accepted: false,
    verdicts: claim.verdicts.map((v) => (v.accepted ? { ...v, accepted: false, reason } : v)),
    notes: [...claim.notes, rejectionNote(iteration, commands, rejectedBy)],
    rejectedBy
  }
}

/** A reviewer's findings, carried to the next prompt under their own heading. */
export interface Finding {
  readonly reviewer: string
  readonly iteration: number
  readonly text: string
}

/** A claim after its review (`--review`): one not approved no longer stands, and the next prompt says why. */
export interface ReviewedClaim extends CheckedClaim {
  readonly reviews: ReadonlyArray<ReviewRecord>
  /** The review did not approve the claim (changes asked, no verdict, a reviewer failed): a rejection `--max-reviews` counts. */
  readonly rejected: boolean
  readonly findings: ReadonlyArray<Finding>
}

/** `claim` as its review left it; `review` is null when none ran. */
export const reviewedClaim = (claim: CheckedClaim, review: ReviewOutcome | null, iteration: number): ReviewedClaim => {
  if (review === null) return { ...claim, reviews: [], rejected: false, findings: [] }
  if (review.approved) return { ...claim, reviews: review.reviews, rejected: false, findings: [] }
  const last = review.reviews.at(-1)
  const rejected = review.gaveUp === null && review.stopped === null && last !== undefined
  const reason = last === undefined ? "not reviewed" : reviewLine(last)
  const findings: Array<Finding> = rejected && last.verdict === "changes" ? [{ reviewer: last.reviewer, iteration, text: last.findings ?? "" }] : []
  const notes = !rejected
    ? []
    : last.verdict === "changes"
    ? [`In iteration ${iteration} your claim passed the checks, but the reviewer ${last.reviewer} asked for changes: its findings are under "Review findings" below. Make them, check your work, and only then claim completion again.`]
    : [`In iteration ${iteration} your claim passed the checks, but its review did not approve it (${reason}). Check your work against the proposal and its tasks, and claim completion again when it is done.`]
  return {
    ...claim,
    claimed: false,
    accepted: false,
    verdicts: claim.verdicts.map((v) => (v.accepted ? { ...v, accepted: false, reason } : v)),
    notes: [...claim.notes, ...notes],
    reviews: review.reviews,
    rejected,
    findings
  }
}
