import { Clock, Effect, Exit, Ref } from "effect"
import type { HarnessUsage, IterationRecord } from "../domain/Domain.js"
import type { GitSnapshot } from "../git/GitSummary.js"
import { GitSummary } from "../git/GitSummary.js"
import type { IterationFacts, SpendGuard } from "../guards/Guards.js"

/** What may stop an agent mid-iteration, short of Ctrl-C: a spend cap, or `--deadline`. */
export type IterationStop = SpendGuard | "deadline"
import type { UsageLimit } from "../guards/LimitWait.js"
import { type Capture, makeCapture } from "../harness/Capture.js"
import type { LoopAgent } from "../agents/LoopAgents.js"
import { runHarness } from "../harness/AgentRun.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { currentTask } from "../prompt/Tasks.js"
import { ErrorJournal } from "../state/ErrorJournal.js"
import { HistoryStore } from "../state/HistoryStore.js"
import type { JournalEntry } from "../state/JournalEntry.js"
import type { StateError } from "../state/StateError.js"
import { verifyClaim } from "../verify/Verification.js"
import type { ReviewOutcome, ReviewWatch } from "../review/Review.js"
import { agentRunEnd, checkedClaim, type Finding, judgeClaim, reviewedClaim } from "./Claim.js"
import { reviewClaim } from "./IterationReview.js"
import { loopReviewers } from "../review/Reviewers.js"
import { measureAndCommit } from "./IterationCommit.js"
import { buildIterationPrompt } from "./IterationPrompt.js"
import { type IterationEnd, iterationFacts, iterationRecord, journalEntryOf, outcomeOf } from "./IterationSteps.js"
import { formatBanner, formatSummary } from "./LoopFormat.js"
import type { LoopInputs } from "./LoopInputs.js"
import type { LoopRequest } from "./LoopRequest.js"

// The loop names the owner's work with these too.
export { listPaths } from "./IterationCommit.js"

/** What every iteration of a run shares. */
export interface IterationContext {
  readonly input: LoopRequest
  readonly runId: string
  readonly loopStartedAt: number
  readonly inputs: LoopInputs
  /** The work tree when this run's first iteration started: a review reads the run's work from it. */
  readonly runStart: Ref.Ref<GitSnapshot | null>
  /** The work tree as the last iteration left it (null: take a snapshot). */
  readonly lastSnapshot: Ref.Ref<GitSnapshot | null>
  /** Journal entries the prompt shows: earlier runs' last few, then this run's. */
  readonly journaled: Ref.Ref<ReadonlyArray<JournalEntry>>
  /** Paths that held uncommitted work when the loop started and no iteration has committed since. */
  readonly ownerWork: Ref.Ref<ReadonlySet<string>>
  /** Paths the loop changed whose commit failed: the next commit takes them too. */
  readonly uncommitted: Ref.Ref<ReadonlyArray<string>>
  readonly setIteration: (iteration: number) => Effect.Effect<void, StateError>
}

/** How the loop watches one iteration: told when it starts and of its usage as it is reported, and able to stop it. */
export interface IterationWatch {
  readonly onStart: Effect.Effect<void>
  readonly onUsage: (usage: HarnessUsage) => Effect.Effect<void>
  readonly stopWhen: Effect.Effect<IterationStop>
  /** Waits out a usage limit a reviewer met, as the loop waits for its agents', or gives up. */
  readonly waitForLimit: ReviewWatch["waitForLimit"]
}

export interface IterationResult {
  readonly record: IterationRecord
  readonly facts: IterationFacts
  /** The usage limit the agent hit, when the iteration is `limited`. */
  readonly limit: UsageLimit | null
  /** What the next prompt must tell the agent about this iteration (a claim set aside). */
  readonly notes: ReadonlyArray<string>
  /** The spend cap that stopped the agent (or a reviewer), when one did. */
  readonly stoppedBy: IterationStop | null
  /** The reviewers' findings, for the next prompt. */
  readonly findings: ReadonlyArray<Finding>
  /** The review turned the claim down: a rejection `--max-reviews` counts. */
  readonly rejected: boolean
  /** A reviewer's usage limit that is not waited out. */
  readonly gaveUp: ReviewOutcome["gaveUp"]
}

/** Runs the project's checks of a claim that would stand; Ctrl-C may stop them (and only them, in here). */
const checkClaim = (
  ctx: IterationContext,
  iteration: number,
  capture: Capture,
  restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
  measured: boolean
) =>
  Effect.gen(function*() {
    const git = yield* GitSummary
    const reporter = yield* LoopReporter
    const { change, options } = ctx.input
    if (!capture.displayAtLineStart) yield* reporter.write("\n")
    capture.displayAtLineStart = true
    const checked = yield* Effect.exit(restore(verifyClaim(options.verify, {
      cwd: ctx.input.cwd,
      timeoutMs: options.verifyTimeoutMs,
      env: { SPOOL_CHANGE: change.id, SPOOL_ITERATION: String(iteration) }
    })))
    if (Exit.isFailure(checked) && !Exit.isInterrupted(checked)) return yield* Effect.failCause(checked.cause)
    // What the checks wrote is not the next iteration's work: it starts from the work tree after them.
    if (measured) yield* Ref.set(ctx.lastSnapshot, yield* ctx.inputs.gitOrWarn(git.snapshot, null))
    return Exit.isSuccess(checked) ? { verification: checked.value, interrupted: false } : { verification: null, interrupted: true }
  })

/** Appends the iteration's record to the history, and journals a failure, its agent run's or a check's. */
const recordIteration = (ctx: IterationContext, capture: Capture, record: IterationRecord, entry: JournalEntry | null) =>
  Effect.gen(function*() {
    const history = yield* HistoryStore
    const journal = yield* ErrorJournal
    const reporter = yield* LoopReporter
    const changeId = ctx.input.change.id
    if (!capture.displayAtLineStart) yield* reporter.write("\n")
    yield* history.append(changeId, record)
    if (entry === null) return
    yield* journal.append(changeId, entry)
    yield* Ref.update(ctx.journaled, (entries) => [...entries, entry])
  })

/** Prints the iteration's summary, its warnings and what became of its claim. */
const reportIteration = (record: IterationRecord, lines: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const reporter = yield* LoopReporter
    yield* reporter.line(formatSummary(record))
    for (const warning of record.warnings) yield* reporter.warn(warning)
    for (const line of lines) yield* reporter.line(line)
  })

/**
 * One iteration: builds the prompt, runs `agent` under `watch`, then records, journals,
 * summarises and commits what it did, even when it was interrupted or stopped.
 */
export const runIteration = (
  ctx: IterationContext,
  iteration: number,
  notesIn: ReadonlyArray<string>,
  findingsIn: ReadonlyArray<Finding>,
  watch: IterationWatch,
  agent: LoopAgent
) =>
  Effect.gen(function*() {
    const history = yield* HistoryStore
    const git = yield* GitSummary
    const harness = agent.service
    const reporter = yield* LoopReporter
    const { change, options } = ctx.input
    const { inputs } = ctx

    const { echoReference, prompt, tasks } = yield* buildIterationPrompt(ctx, iteration, notesIn, findingsIn)
    const task = currentTask(tasks)
    const startedAt = yield* Clock.currentTimeMillis
    yield* ctx.setIteration(iteration)
    yield* reporter.line(formatBanner(iteration, options.maxIterations, startedAt - ctx.loopStartedAt))
    yield* watch.onStart
    // The previous iteration's closing snapshot is this one's start: nothing but the agent changes
    // the work tree in between, and it saves a scan of the work tree per iteration.
    const before = (yield* Ref.get(ctx.lastSnapshot)) ?? (yield* inputs.gitOrWarn(git.snapshot, null))
    if ((yield* Ref.get(ctx.runStart)) === null) yield* Ref.set(ctx.runStart, before)
    // The end of what the agent said is kept only where a review reads it (its closing message).
    const capture = makeCapture(options.completionPromise, echoReference, (yield* loopReviewers).reviewers.length > 0)
    // Stryker disable next-line StringLiteral: the log opens before the agent runs; an iteration cut short before that is never journaled, so its log path is never read
    let logPath = ""

    // Only the checks of a claim can be interrupted once the agent is done: the iteration is then recorded as interrupted.
    const finish = (interrupted: boolean) =>
      Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
        const endedAt = yield* Clock.currentTimeMillis
        const agentRun = agentRunEnd(capture, interrupted)
        const judgement = capture.judge.judgement()
        const tasksAfter = interrupted ? tasks : yield* inputs.readTasks
        const judged = judgeClaim(agentRun, judgement, options, iteration, tasksAfter)
        // The agent's work is measured and committed before any check runs: what a check writes
        // (coverage, build output) is not the iteration's work, nor the next one's.
        const work = yield* measureAndCommit(ctx, iteration, before, interrupted)
        const after = yield* Ref.get(ctx.lastSnapshot)
        // A claim that would stand is checked by the project's own checks (--verify), and stands only if they pass.
        const checks = judged.accepted && options.verify.length > 0
          ? yield* checkClaim(ctx, iteration, capture, restore, work.measured)
          : { verification: null, interrupted: false }
        const checked = checkedClaim(judged, checks.verification, options.verify, iteration)
        // A claim that passed the checks is reviewed (--review), and stands only if every reviewer approves.
        const reviewed = checked.accepted && !checks.interrupted
          ? yield* reviewClaim(ctx, { iteration, capture, tasksAfter, verification: checks.verification, after, agentUsage: capture.usage }, watch, restore)
          : { outcome: null, interrupted: false }
        const review = reviewed.outcome
        const claim = reviewedClaim(checked, review, iteration)
        const stoppedBy = (capture.stopped ?? review?.stopped ?? null) as IterationStop | null
        const outcome = review?.gaveUp != null
          ? "limited"
          : review?.stopped != null
          ? "stopped"
          : claim.rejected
          ? "changes"
          : outcomeOf(capture, {
            interrupted: interrupted || checks.interrupted || reviewed.interrupted,
            failed: agentRun.failed || claim.rejectedBy !== null,
            accepted: claim.accepted
          })
        const redact = ctx.input.redact
        const end: IterationEnd = {
          runId: ctx.runId,
          iteration,
          startedAt,
          endedAt,
          capture,
          agentRun,
          claim,
          outcome,
          work,
          verification: checks.verification,
          task,
          logPath,
          redact,
          error: capture.error === null ? null : redact(capture.error),
          stderr: redact(capture.stderr.text(logPath)),
          sandboxed: ctx.input.sandbox !== undefined,
          agent: { id: agent.id, harness: agent.harness, model: agent.model }
        }
        const record = iterationRecord(end)
        yield* recordIteration(ctx, capture, record, journalEntryOf(end))
        yield* reportIteration(record, claim.lines)
        const facts = iterationFacts(end, judgement.claimed, tasks, tasksAfter)
        if (checks.interrupted || reviewed.interrupted) return yield* Effect.interrupt
        return {
          record,
          facts,
          limit: capture.limited,
          notes: claim.notes,
          stoppedBy,
          findings: claim.findings,
          rejected: claim.rejected,
          gaveUp: review?.gaveUp ?? null
        } satisfies IterationResult
      }))

    yield* Effect.scoped(
      Effect.gen(function*() {
        const log = yield* history.openLog(change.id, ctx.runId, iteration)
        logPath = log.path
        yield* log.write(ctx.input.redact(`=== prompt (iteration ${iteration}) ===\n${prompt}\n=== output ===\n`))
        yield* runHarness({
          harness,
          request: { prompt, changeId: change.id, iteration, cwd: ctx.input.cwd },
          capture,
          log,
          reporter,
          stream: options.stream,
          inactivityTimeoutMs: options.inactivityTimeoutMs,
          redact: ctx.input.redact,
          onUsage: watch.onUsage,
          stopWhen: watch.stopWhen
        })
      })
    ).pipe(Effect.onInterrupt(() => finish(true).pipe(Effect.ignore)))
    // Uninterruptible but for its checks, which record the interruption themselves: one record, whatever happens.
    return yield* finish(false)
  })
