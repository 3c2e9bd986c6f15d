import { Clock, Deferred, Effect, Ref } from "effect"
import type { HarnessUsage } from "../domain/Domain.js"
import { addSpend, type GuardStop, spendStop } from "../guards/Guards.js"
import { type LimitPlan, sleepLong, type UsageLimit } from "../guards/LimitWait.js"
import { addUsage } from "../domain/Usage.js"
import { LoopEvent, LoopEvents } from "../live/LoopEvents.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { HistoryStore } from "../state/HistoryStore.js"
import { LoopLock } from "../state/LoopLock.js"
import { type IterationResult, type IterationStop, type IterationWatch, runIteration } from "./Iteration.js"
import { chooseAgent, noteIteration, noteLimit } from "./AgentTurn.js"
import type { Finding } from "./Claim.js"
import { iterationWaits } from "./LimitWaiting.js"
import type { LoopRun } from "./LoopRun.js"

/** What came of trying to run one iteration. */
export type Attempt =
  | { readonly _tag: "Ran"; readonly result: IterationResult }
  | {
    readonly _tag: "GaveUp"
    /** The iterations run: the limit was met by this one, or by another loop before it ran. */
    readonly iterations: number
    readonly limit: string | null
    readonly plan: Extract<LimitPlan, { _tag: "GiveUp" }>
    /** The iteration's result, when a reviewer's limit was not waited out after it ran. */
    readonly result?: IterationResult
  }
  | { readonly _tag: "Capped"; readonly stop: GuardStop }

/** The guards watching one iteration: a spend cap reached by what the agent reports, or the end of --max-duration, stops it. */
const watchIteration = (run: LoopRun, iteration: number, waitForLimit: IterationWatch["waitForLimit"]) => Effect.gen(function*() {
  const reporter = yield* LoopReporter
  const { options } = run.input
  const { deadlineAt, maxDurationEnd } = run
  const reportProgress = (usage: HarnessUsage | null) =>
    reporter.progress === undefined ? Effect.void : reporter.progress({ iteration, maxIterations: options.maxIterations, usage })
  const reached = yield* Deferred.make<IterationStop>()
  const { spend } = yield* Ref.get(run.counters)
  const usedBefore = yield* Ref.get(run.runUsage)
  const outOfTime = maxDurationEnd === null
    ? Effect.never
    : Effect.flatMap(Clock.currentTimeMillis, (now) => sleepLong(maxDurationEnd - now)).pipe(Effect.as<IterationStop>("max-duration"))
  const pastDeadline = deadlineAt === null
    ? Effect.never
    : Effect.flatMap(Clock.currentTimeMillis, (now) => sleepLong(deadlineAt - now)).pipe(Effect.as<IterationStop>("deadline"))
  return {
    onStart: reportProgress(usedBefore),
    onUsage: (usage) =>
      Effect.flatMap(run.elapsed, (ms) => {
        const stop = spendStop(options, addSpend(spend, usage), ms)
        return Effect.zipRight(
          reportProgress(addUsage(usedBefore, usage)),
          stop === null ? Effect.void : Deferred.succeed(reached, stop.reason)
        )
      }),
    stopWhen: Effect.raceAll([Deferred.await(reached), outOfTime, pastDeadline]),
    waitForLimit
  } satisfies IterationWatch
})

/** The history the iterations write to: each record appended is published too. */
const publishingHistory = Effect.gen(function*() {
  const history = yield* HistoryStore
  const events = yield* LoopEvents
  return HistoryStore.of({
    ...history,
    append: (changeId, record) =>
      Effect.zipRight(history.append(changeId, record), events.publish(LoopEvent.IterationRecorded({ changeId, record })))
  })
})

/** The plan of a wait that cannot end: a limit held for the rest of the run. */
const neverLifts = (agent: string): Extract<LimitPlan, { _tag: "GiveUp" }> => ({
  _tag: "GiveUp",
  resumeAt: null,
  why: `the usage limit of ${agent} does not reset by waiting`
})

/**
 * Runs iteration `iteration` with the agent the choice policy picks. A usage limit the agent meets
 * holds it off: the iteration runs again at once with the next agent that is free, and only when
 * every agent is held does it wait, as the limit schedule allows, for the first to be free. The
 * lock is checked before each run of an agent.
 */
export const attemptIteration = (run: LoopRun, iteration: number, notes: ReadonlyArray<string>, findings: ReadonlyArray<Finding> = []) =>
  Effect.gen(function*() {
    const reporter = yield* LoopReporter
    const lock = yield* LoopLock
    const history = yield* publishingHistory
    const { change, options } = run.input
    const { deadlineAt, gate, maxDurationEnd, saveState } = run
    const { agents } = run.agents
    const waitUntil = maxDurationEnd === null ? deadlineAt : deadlineAt === null ? maxDurationEnd : Math.min(maxDurationEnd, deadlineAt)
    const settings = { maxLimitWaitMs: options.maxLimitWaitMs, deadline: waitUntil }
    const { waitFor } = yield* iterationWaits({ settings, gate, reporter, saveState, several: agents.length > 1 })
    const backoffs = new Map<string, number>()
    /**
     * The limits the agents met in this attempt, by agent index, each the last that agent met: the
     * iteration ran, and a wait for one of them plans from its own limit (a reset time plus the
     * margin), whichever agent met a limit last.
     */
    const met = new Map<number, { readonly limit: UsageLimit; readonly error: string | null }>()
    for (;;) {
      yield* lock.check(change.id)
      const capped = spendStop(options, (yield* Ref.get(run.counters)).spend, yield* run.elapsed)
      if (capped !== null) return { _tag: "Capped", stop: capped } satisfies Attempt
      const { held, pick } = yield* chooseAgent(run, iteration)
      if (pick._tag === "Wait") {
        const agent = agents[pick.index]!.id
        const hold = held.get(agent)!
        const own = met.get(pick.index)
        const plan = own !== undefined
          ? yield* waitFor(own.limit, agent)
          : Number.isFinite(pick.until)
          ? yield* waitFor({ heldUntil: pick.until, metBy: hold.changeId === change.id ? "this loop" : "another loop" }, agent)
          : neverLifts(agent)
        if (plan._tag === "GiveUp") {
          const limit = own?.error ?? (hold.changeId === change.id ? `the usage limit ${agent} met` : `the usage limit the loop on ${hold.changeId} met`)
          return { _tag: "GaveUp", iterations: met.size === 0 ? iteration - 1 : iteration, limit, plan } satisfies Attempt
        }
        yield* saveState({ status: "running", resumeAt: null })
        met.clear()
        continue
      }
      const result = yield* runIteration(run.iterations, iteration, notes, findings, yield* watchIteration(run, iteration, waitFor), agents[pick.index]!).pipe(
        Effect.provideService(HistoryStore, history)
      )
      // The reviewers' spend counts toward the caps with the agent's.
      for (const usage of [result.record.usage, ...(result.record.reviews ?? []).map((review) => review.usage)]) {
        yield* Ref.update(run.counters, (c) => ({ ...c, spend: addSpend(c.spend, usage) }))
        if (usage !== null) yield* Ref.update(run.runUsage, (total) => addUsage(total, usage))
      }
      yield* noteIteration(run, pick.index, result.record)
      if (result.gaveUp !== null) {
        return { _tag: "GaveUp", iterations: iteration, limit: result.gaveUp.limit, plan: result.gaveUp.plan, result } satisfies Attempt
      }
      if (result.limit === null) return { _tag: "Ran", result } satisfies Attempt
      yield* noteLimit(run, pick.index, result.limit, backoffs)
      met.set(pick.index, { limit: result.limit, error: result.record.error })
    }
  })
