import type { IterationOutcome, IterationRecord } from "../domain/Domain.js"
import type { IterationFacts } from "../guards/Guards.js"
import type { Capture } from "../harness/Capture.js"
import type { Redactor } from "../output/Redact.js"
import { type Task, taskCounts, type TaskList } from "../prompt/Tasks.js"
import type { JournalEntry } from "../state/JournalEntry.js"
import { checkFailure, checkResult, journalCheck, type Verification } from "../verify/Verification.js"
import type { AgentRunEnd, ReviewedClaim } from "./Claim.js"
import type { IterationWork } from "./IterationCommit.js"

/** What the iteration comes to: how the agent run ended, and whether its claim stood. */
export const outcomeOf = (
  capture: Pick<Capture, "stopped" | "limited" | "timedOut">,
  state: { interrupted: boolean; failed: boolean; accepted: boolean }
): IterationOutcome =>
  state.interrupted
    ? "interrupted"
    : capture.stopped !== null
    ? "stopped"
    : capture.limited !== null
    ? "limited"
    : state.accepted
    ? "complete"
    : capture.timedOut
    ? "timeout"
    : state.failed
    ? "failed"
    : "continue"

/** Everything an iteration leaves behind is made of, once it is over. */
export interface IterationEnd {
  readonly runId: string
  readonly iteration: number
  readonly startedAt: number
  readonly endedAt: number
  readonly capture: Capture
  readonly agentRun: AgentRunEnd
  readonly claim: ReviewedClaim
  readonly outcome: IterationOutcome
  readonly work: IterationWork
  readonly verification: Verification | null
  /** The task the agent was on when the iteration started. */
  readonly task: Task | null
  /** Where the iteration's full output is, for the journal's cut streams. */
  readonly logPath: string
  readonly redact: Redactor
  /** What the agent reported may quote secrets, like its output: redacted once, used everywhere. */
  readonly error: string | null
  readonly stderr: string
  /** Its agent and checks ran in the sandbox (`--sandbox`). */
  readonly sandboxed: boolean
  /** The agent that ran: its id, harness and model. */
  readonly agent: { readonly id: string; readonly harness: string; readonly model: string | null }
}

/** What the error journal, then the failure breaker, are told: the agent run failed, or a check rejected its claim. */
const failedOrRejected = (end: IterationEnd) => end.agentRun.failed || end.claim.rejectedBy !== null

/** The iteration's line in the history. */
export const iterationRecord = (end: IterationEnd): IterationRecord => {
  const { capture, claim, redact, verification } = end
  return {
    run: end.runId,
    iteration: end.iteration,
    startedAt: new Date(end.startedAt).toISOString(),
    durationMs: end.endedAt - end.startedAt,
    exitCode: capture.exitCode,
    signal: capture.signal,
    completionDetected: claim.claimed,
    promises: claim.verdicts.map((verdict) => ({ ...verdict, text: redact(verdict.text) })),
    outcome: end.outcome,
    git: end.work.summary,
    commit: end.work.commit,
    usage: capture.usage,
    error: end.outcome === "limited" ? (capture.limited === null ? null : redact(capture.limited.message)) : end.error,
    warnings: [...capture.warnings, ...claim.warnings, ...end.work.warnings].map(redact),
    ...(verification === null ? {} : { verify: verification.results.map(checkResult) }),
    ...(end.sandboxed ? { sandboxed: true } : {}),
    ...(claim.reviews.length === 0 ? {} : { reviews: claim.reviews }),
    agent: end.agent.id,
    harness: end.agent.harness,
    model: end.agent.model
  }
}

/** The error journal's entry for the iteration, when its agent run failed or a check rejected its claim; null otherwise. */
export const journalEntryOf = (end: IterationEnd): JournalEntry | null => {
  if (!failedOrRejected(end)) return null
  const { capture, redact, task } = end
  const rejectedBy = end.claim.rejectedBy
  return {
    timestamp: new Date(end.endedAt).toISOString(),
    run: end.runId,
    iteration: end.iteration,
    exitCode: capture.exitCode,
    signal: capture.signal,
    timedOut: capture.timedOut,
    error: end.error,
    taskId: task?.id ?? null,
    taskDescription: task?.description ?? null,
    // A rejected claim's failure is the check's: its output, not the agent's.
    stderr: rejectedBy === null ? end.stderr : "",
    stdout: rejectedBy === null ? redact(capture.stdout.text(end.logPath)) : "",
    check: rejectedBy === null ? null : journalCheck(rejectedBy, redact)
  }
}

const lastLine = (text: string) => text.split("\n").map((line) => line.trim()).filter((line) => line !== "").at(-1) ?? null

/**
 * What the loop's guards are told of the iteration: whether it made progress (it claimed
 * completion, ticked a task, committed or changed files; null when that cannot be known) and what
 * went wrong, to recognise the same error again. `claimed`: the agent printed a claim, whatever became of it.
 */
export const iterationFacts = (end: IterationEnd, claimed: boolean, tasks: TaskList, tasksAfter: TaskList): IterationFacts => {
  const { summary, commit } = end.work
  const rejectedBy = end.claim.rejectedBy
  const tasksTicked = taskCounts(tasksAfter).complete > taskCounts(tasks).complete
  return {
    outcome: end.outcome,
    progress: claimed || tasksTicked || commit !== null ? true : summary === null ? null : summary.changedFiles > 0,
    failure: end.agentRun.failed ? end.error ?? lastLine(end.stderr) : rejectedBy !== null ? checkFailure(rejectedBy) : null
  }
}
