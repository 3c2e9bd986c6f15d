import { Clock, Deferred, Effect, Option, Random, Ref } from "effect"
import { ContextStore } from "../state/ContextStore.js"
import type { HarnessUsage, LoopState } from "../domain/Domain.js"
import { ErrorJournal } from "../state/ErrorJournal.js"
import { type GitSnapshot, GitSummary } from "../git/GitSummary.js"
import {
  addSpend,
  countIteration,
  describeSpend,
  type GuardStop,
  guardReport,
  initialCounters,
  judgeCounters,
  spendStop,
  unsupportedCap
} from "../guards/Guards.js"
import { addUsage } from "../domain/Usage.js"
import { HarnessService } from "../harness/HarnessService.js"
import { HistoryStore } from "../state/HistoryStore.js"
import { type IterationContext, type IterationResult, type IterationStop, listPaths, runIteration, type IterationWatch } from "./Iteration.js"
import { beforeIteration, deadlineCame } from "./Deadline.js"
import type { JournalEntry } from "../state/JournalEntry.js"
import { clock, type LimitPlan, sleepLong } from "../guards/LimitWait.js"
import { UsageLimitGate } from "../guards/UsageLimitGate.js"
import { LoopEvent, LoopEvents } from "../live/LoopEvents.js"
import { oneLine } from "../text/Text.js"
import { iterationWaits } from "./LimitWaiting.js"
import { makeLoopInputs } from "./LoopInputs.js"
import { LoopLock } from "../state/LoopLock.js"
import { Checkpoint } from "../remote/Checkpoint.js"
import { withinGrace } from "../harness/Grace.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { LoopFailedError, type LoopResult } from "./LoopResult.js"
import { openTaskCount } from "../prompt/Tasks.js"
import type { LoopRequest } from "./LoopRequest.js"
import { planResume, type ResumePlan } from "./Resume.js"
import { rejectingCheck } from "../verify/Verification.js"
import { isTreePath } from "../tree/Layout.js"
import { treeOf } from "../state/Workspace.js"

const compactStamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")

type Next = { readonly _tag: "Next"; readonly iteration: number; readonly notes: ReadonlyArray<string> }
type End = { readonly _tag: "End"; readonly result: LoopResult }
type Attempt =
  | { readonly _tag: "Ran"; readonly result: IterationResult }
  | {
    readonly _tag: "GaveUp"
    /** The iterations run: the limit was met by this one, or by another loop before it ran. */
    readonly iterations: number
    readonly limit: string | null
    readonly plan: Extract<LimitPlan, { _tag: "GiveUp" }>
  }
  | { readonly _tag: "Capped"; readonly stop: GuardStop }

/** A run's name: its start time and a short tag from `Random`, `20261101T100000Z-k3f9`. */
const makeRunId = (startedAt: number) =>
  Effect.map(Random.nextIntBetween(0, 36 ** 4), (tag) => `${compactStamp(startedAt)}-${tag.toString(36).padStart(4, "0")}`)

const fresh: ResumePlan = { _tag: "Fresh" }

/** What `--resume` makes of the change's last run, read from its state and the newest record of its history. */
const readResumePlan = (history: HistoryStore["Type"], changeId: LoopRequest["change"]["id"]) =>
  Effect.gen(function*() {
    const state = Option.getOrNull(yield* history.readState(changeId))
    const { records } = yield* history.recent(changeId, 1)
    return planResume(state, records.at(-1) ?? null)
  })

/**
 * Runs iterations until the promise is accepted, `maxIterations` have run or a guard stops the
 * loop, holding the change's lock throughout (it stops if the lock is lost). A usage limit, met
 * by this loop or by another one sharing its gate, is waited out and the same iteration runs
 * again. Each state and each iteration's record is published as `LoopEvents`.
 */
export const runLoop = (input: LoopRequest) =>
  Effect.gen(function*() {
    const contexts = yield* ContextStore
    const history = yield* HistoryStore
    const journal = yield* ErrorJournal
    const git = yield* GitSummary
    const harness = yield* HarnessService
    const reporter = yield* LoopReporter
    const lock = yield* LoopLock
    const events = yield* LoopEvents
    /** Keeps the work and state beyond this machine (with --remote, a push), where a checkpoint is given. */
    const checkpoint = Option.match(yield* Effect.serviceOption(Checkpoint), {
      onNone: () => Effect.void,
      onSome: (kept) => kept.save(input.change.id)
    })
    const { change, options } = input
    const plan = input.resume === true ? yield* readResumePlan(history, change.id) : fresh
    if (plan._tag === "Done") {
      // Nothing runs and nothing is written: the run is over.
      const message = `complete: run ${plan.run} completed at iteration ${plan.iteration}; nothing to resume (without --resume a new run starts)`
      yield* reporter.line(message)
      return { run: plan.run, status: "complete", reason: "complete", iterations: plan.iteration, message, resumeAt: null } satisfies LoopResult
    }
    const gate = yield* Effect.flatMap(UsageLimitGate, (gates) => gates.forLoop(change.id))
    const inputs = yield* makeLoopInputs(change)

    // Bad input stops the run before it writes anything: the agent must start, its caps must be
    // ones it reports, and everything an iteration reads is read once here. Only then is the
    // change locked and state written.
    const unsupported = unsupportedCap(options, harness.name, harness.reports)
    if (unsupported !== null) return yield* unsupported
    yield* harness.preflight
    yield* contexts.load(change.id)
    yield* inputs.readDocument(change.proposalPath)
    if (change.modulePath !== null) yield* inputs.readDocument(change.modulePath)
    yield* inputs.readQuoted
    yield* inputs.readTasks
    const previousOwner = yield* lock.acquire(change.id)
    if (Option.isSome(previousOwner)) {
      yield* reporter.warn(
        `took over the lock of a loop that is no longer running (pid ${previousOwner.value.pid}, started ${previousOwner.value.startedAt})`
      )
    }

    const sittingStartedAt = yield* Clock.currentTimeMillis
    const resumed = plan._tag === "Continue" ? plan : null
    const runId = resumed?.run ?? (yield* makeRunId(sittingStartedAt))
    /** When the run would have started had it never paused: its time so far counts toward --max-duration. */
    const loopStartedAt = sittingStartedAt - (resumed?.elapsedMs ?? 0)
    const deadline = options.maxDurationMs === null ? null : loopStartedAt + options.maxDurationMs
    const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - loopStartedAt)
    const counters = yield* Ref.make(resumed?.counters ?? initialCounters)
    /** With --deadline: when the run must have ended, and how long its iterations took, which say whether another fits. */
    const until = input.deadline ?? null
    const durations = yield* Ref.make<ReadonlyArray<number>>(
      resumed === null || until === null
        ? []
        : (yield* history.recent(change.id, 50)).records.filter((r) => r.run === resumed.run).map((r) => r.durationMs)
    )
    /** Everything the harness reported this run, for reporters with a live status line. */
    const runUsage = yield* Ref.make<HarnessUsage | null>(null)
    const reportProgress = (iteration: number, usage: HarnessUsage | null) =>
      reporter.progress === undefined ? Effect.void : reporter.progress({ iteration, maxIterations: options.maxIterations, usage })
    const state = yield* Ref.make<LoopState>({
      changeId: change.id,
      ...(input.worktree == null ? {} : { branch: input.worktree.branch, worktree: input.worktree.root }),
      run: runId,
      status: "running",
      iteration: (resumed?.iteration ?? 1) - 1,
      minIterations: options.minIterations,
      maxIterations: options.maxIterations,
      startedAt: resumed?.startedAt ?? new Date(sittingStartedAt).toISOString(),
      updatedAt: new Date(sittingStartedAt).toISOString(),
      pid: input.pid,
      harness: harness.name,
      stopReason: null,
      stopMessage: null,
      resumeAt: null,
      guards: guardReport(options, resumed?.counters ?? initialCounters),
      ...(input.settings === undefined ? {} : { settings: input.settings })
    })
    const saveState = (patch: Partial<LoopState>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const counted = yield* Ref.get(counters)
        const next = yield* Ref.updateAndGet(state, (s) => ({
          ...s,
          ...patch,
          guards: guardReport(options, counted),
          elapsedMs: now - loopStartedAt,
          failureStreak: counted.failureFingerprints,
          updatedAt: new Date(now).toISOString()
        }))
        // Published before it is written: those who follow the loop learn of its end even when the file cannot say it.
        yield* events.publish(LoopEvent.StateChanged({ changeId: change.id, state: next }))
        yield* history.writeState(change.id, next)
      })

    // Earlier runs' failures are read once; this run's are added as they are journaled.
    const earlierErrors: ReadonlyArray<JournalEntry> = options.errorHistory === 0 ? [] : (yield* journal.read(change.id).pipe(
      Effect.catchAll((error) => Effect.as(reporter.warn(`${error.message}; earlier errors are left out of the prompt`), []))
    )).slice(-options.errorHistory)
    const ctx: IterationContext = {
      input,
      runId,
      loopStartedAt,
      inputs,
      lastSnapshot: yield* Ref.make<GitSnapshot | null>(null),
      journaled: yield* Ref.make(earlierErrors),
      ownerWork: yield* Ref.make<ReadonlySet<string>>(new Set()),
      uncommitted: yield* Ref.make<ReadonlyArray<string>>([]),
      setIteration: (iteration) => saveState({ iteration })
    }

    yield* saveState({})
    if (resumed !== null) {
      const { spend } = resumed.counters
      yield* reporter.line(
        `resuming run ${runId} at iteration ${resumed.iteration} (so far: ${describeSpend(spend, resumed.elapsedMs)})`
      )
    }
    if (!git.repository) {
      yield* reporter.warn(
        "not inside a git repository: iterations will not be summarized or committed, and the stall breaker cannot see file changes"
      )
    } else {
      // The work tree as the loop found it: the first iteration's start, and the owner's work its commits leave out.
      const start = yield* inputs.gitOrWarn(git.snapshot, null)
      yield* Ref.set(ctx.lastSnapshot, start)
      const dirty = start === null ? [] : yield* inputs.gitOrWarn(git.dirtyPaths(start), [])
      yield* Ref.set(ctx.ownerWork, new Set(dirty))
      const tree = treeOf(change)
      const outside = dirty.filter((path) => !isTreePath(tree, path))
      if (options.commit && outside.length > 0) {
        yield* reporter.warn(
          `the work tree holds ${outside.length} uncommitted change${outside.length === 1 ? "" : "s"} outside ${tree.dir === ".spool" ? ".spool/" : `.spool/ and ${tree.dir}/`} ` +
            `(${listPaths(outside)}): spool commits only what each iteration changes and leaves ${outside.length === 1 ? "it" : "them"} out ` +
            "(to keep the loop apart from them, run it with --worktree)"
        )
      }
    }

    /** The guards watching one iteration: a spend cap reached by what the agent reports, or the end of --max-duration, stops it. */
    const watchIteration = (iteration: number) => Effect.gen(function*() {
      const reached = yield* Deferred.make<IterationStop>()
      const { spend } = yield* Ref.get(counters)
      const usedBefore = yield* Ref.get(runUsage)
      const outOfTime = deadline === null
        ? Effect.never
        : Effect.flatMap(Clock.currentTimeMillis, (now) => sleepLong(deadline - now)).pipe(Effect.as<IterationStop>("max-duration"))
      const pastDeadline = until === null
        ? Effect.never
        : Effect.flatMap(Clock.currentTimeMillis, (now) => sleepLong(until - now)).pipe(Effect.as<IterationStop>("deadline"))
      return {
        onStart: reportProgress(iteration, usedBefore),
        onUsage: (usage) =>
          Effect.flatMap(elapsed, (ms) => {
            const stop = spendStop(options, addSpend(spend, usage), ms)
            return Effect.zipRight(
              reportProgress(iteration, addUsage(usedBefore, usage)),
              stop === null ? Effect.void : Deferred.succeed(reached, stop.reason)
            )
          }),
        stopWhen: Effect.raceAll([Deferred.await(reached), outOfTime, pastDeadline])
      } satisfies IterationWatch
    })

    /** The history the iterations write to: each record appended is published too. */
    const publishingHistory = HistoryStore.of({
      ...history,
      append: (changeId, record) =>
        Effect.zipRight(history.append(changeId, record), events.publish(LoopEvent.IterationRecorded({ changeId, record })))
    })

    /**
     * Runs iteration `iteration`, waiting out usage limits (its own, and those other loops met) and
     * running it again as the limit schedule allows. The lock is checked before each run of the agent.
     */
    const attemptIteration = (iteration: number, notes: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const waitUntil = deadline === null ? until : until === null ? deadline : Math.min(deadline, until)
        const { waitFor } = yield* iterationWaits({ settings: { maxLimitWaitMs: options.maxLimitWaitMs, deadline: waitUntil }, gate, reporter, saveState })
        for (;;) {
          yield* lock.check(change.id)
          const capped = spendStop(options, (yield* Ref.get(counters)).spend, yield* elapsed)
          if (capped !== null) return { _tag: "Capped", stop: capped } satisfies Attempt
          const held = yield* gate.heldByOthers
          if (Option.isSome(held)) {
            const plan = yield* waitFor({ heldUntil: held.value.until })
            if (plan._tag === "GiveUp") {
              const limit = `the usage limit the loop on ${held.value.changeId} met`
              return { _tag: "GaveUp", iterations: iteration - 1, limit, plan } satisfies Attempt
            }
            yield* saveState({ status: "running", resumeAt: null })
            continue
          }
          const result = yield* runIteration(ctx, iteration, notes, yield* watchIteration(iteration)).pipe(
            Effect.provideService(HistoryStore, publishingHistory)
          )
          const { usage } = result.record
          yield* Ref.update(counters, (c) => ({ ...c, spend: addSpend(c.spend, usage) }))
          if (usage !== null) yield* Ref.update(runUsage, (total) => addUsage(total, usage))
          if (result.limit === null) return { _tag: "Ran", result } satisfies Attempt
          const plan = yield* waitFor(result.limit)
          if (plan._tag === "GiveUp") return { _tag: "GaveUp", iterations: iteration, limit: result.record.error, plan } satisfies Attempt
          yield* saveState({ status: "running", resumeAt: null })
        }
      })

    const end = (result: Omit<LoopResult, "run">): End => ({ _tag: "End", result: { run: runId, ...result } })

    /** One iteration and what the guards make of it: the next iteration, or the end of the run. */
    const step = ({ iteration, notes }: Next) =>
      Effect.gen(function*() {
        if (until !== null) {
          const decision = beforeIteration(until, yield* Clock.currentTimeMillis, yield* Ref.get(durations))
          if (decision._tag === "Stop") {
            return end({ status: "deadline", reason: "deadline", iterations: iteration - 1, message: decision.message, resumeAt: null })
          }
        }
        const attempt = yield* attemptIteration(iteration, notes)
        if (attempt._tag === "Capped") {
          return end({ status: "stopped", reason: attempt.stop.reason, iterations: iteration - 1, message: attempt.stop.message, resumeAt: null })
        }
        if (attempt._tag === "GaveUp") {
          const { plan } = attempt
          const when = plan.resumeAt === null ? "run spool again once it is lifted" : `run spool again after ${clock(plan.resumeAt)}`
          const message = `stopped: ${plan.why} (${oneLine(attempt.limit ?? "usage limit")}); ${when}`
          return end({ status: "usage-limit", reason: "usage-limit", iterations: attempt.iterations, message, resumeAt: plan.resumeAt })
        }
        const { result } = attempt
        if (result.record.outcome === "complete") {
          return end({ status: "complete", reason: "complete", iterations: iteration, message: `complete: the promise was accepted at iteration ${iteration}`, resumeAt: null })
        }
        yield* Ref.update(durations, (list) => [...list, result.record.durationMs])
        if (result.stoppedBy === "deadline" && until !== null) {
          return end({ status: "deadline", reason: "deadline", iterations: iteration, message: deadlineCame(until), resumeAt: null })
        }
        const ms = yield* elapsed
        const counted = yield* Ref.updateAndGet(counters, (c) => countIteration(c, result.facts))
        const cap = spendStop(options, counted.spend, ms)
        if (cap !== null) {
          // A guard that stopped the agent mid-run finds its cap reached here too: spend and time only grow.
          return end({ status: "stopped", reason: cap.reason, iterations: iteration, message: cap.message, resumeAt: null })
        }
        const verdict = judgeCounters(options, counted, result.facts.failure, ms)
        if (verdict._tag === "Fail") {
          const { record } = result
          return yield* new LoopFailedError({
            iteration,
            exitCode: record.exitCode,
            signal: record.signal,
            error: record.error,
            outcome: record.outcome,
            failures: verdict.failure.failures,
            failFast: options.failFast,
            sameError: verdict.failure.sameError,
            check: rejectingCheck(record.verify ?? [])
          })
        }
        if (verdict._tag === "Stop") {
          return end({ status: "stopped", reason: verdict.stop.reason, iterations: iteration, message: verdict.stop.message, resumeAt: null })
        }
        if (verdict.warning !== null) yield* reporter.warn(verdict.warning)
        if (iteration >= options.maxIterations) {
          const missing = options.verify.length > 0 ? "a claim of completion that passed --verify" : "the completion promise"
          const message = `stopped: --max-iterations (${options.maxIterations}) reached without ${missing}`
          return end({ status: "max-iterations", reason: "max-iterations", iterations: iteration, message, resumeAt: null })
        }
        const next: Next = { _tag: "Next", iteration: iteration + 1, notes: verdict.note === null ? result.notes : [...result.notes, verdict.note] }
        yield* checkpoint
        return next
      })

    const firstIteration = resumed?.iteration ?? 1
    const first: Next | End = firstIteration > options.maxIterations
      ? end({
        status: "max-iterations",
        reason: "max-iterations",
        iterations: firstIteration - 1,
        message: `stopped: --max-iterations (${options.maxIterations}) reached before this sitting; raise it to go on`,
        resumeAt: null
      })
      : { _tag: "Next", iteration: firstIteration, notes: [] }
    const ending = yield* Effect.iterate(first, { while: (s): s is Next => s._tag === "Next", body: step }).pipe(
      Effect.tapError((error) =>
        // The state of a change whose lock another loop took is that loop's to write.
        error._tag === "LockLostError" && error.reason === "TakenOver" ? Effect.void : saveState({
          status: "failed",
          stopReason: error._tag === "LoopFailedError" ? "failures" : "error",
          stopMessage: error.message,
          resumeAt: null
        }).pipe(Effect.zipRight(checkpoint), Effect.ignore)
      ),
      Effect.onInterrupt(() =>
        saveState({ status: "interrupted", stopReason: "interrupted", resumeAt: null }).pipe(Effect.zipRight(withinGrace(checkpoint)), Effect.ignore)
      )
    )
    if (ending._tag !== "End") return yield* Effect.dieMessage("the loop ended without a result")
    const { result } = ending
    const resumeAt = result.resumeAt === null ? null : new Date(result.resumeAt).toISOString()
    yield* saveState({ status: result.status, stopReason: result.reason, stopMessage: result.message, resumeAt })
    yield* reporter.line(result.message)
    if (result.status === "complete") {
      const open = openTaskCount(yield* inputs.readTasks)
      if (!options.keepErrors && open === 0) {
        const archived = yield* journal.archive(change.id, compactStamp(yield* Clock.currentTimeMillis))
        if (archived !== null) yield* reporter.line(`error journal archived to ${archived}; errors.md is now empty`)
      }
    }
    yield* checkpoint
    return result satisfies LoopResult
  }).pipe(Effect.scoped)
