import { Cause, Clock, Effect, Either, Exit, Fiber, Option, Queue, Ref } from "effect"
import type { AgentNote, ApprovalNote, MergeNote } from "../domain/Domain.js"
import { sumAgentSpend, sumReviewSpend } from "../domain/Usage.js"
import type { AgentSpend, ReviewSpend, SpendFigures } from "../text/Figures.js"
import type { LoopResult } from "../loop/LoopResult.js"
import { LockError } from "../state/LoopLock.js"
import { type Readiness, type SweepEnding, sweepEnding, type SweepOutcome } from "./SweepPolicy.js"

/** What a change's run left behind, as its history records tell it. */
export interface RunFacts {
  readonly iterations: number
  /** What its agents spent; its reviewers' spend is apart, in `reviews`. */
  readonly costUsd: number | null
  readonly tokens: number | null
  /** Its claims' reviews (`--review`) and what the reviewers spent; absent: none ran. */
  readonly reviews?: ReviewSpend
  readonly branch: string | null
  readonly lastCommit: string | null
  /** The run's agents (the loop's own, then its `--fallback`s) and what each ran and spent; none where the state kept none. */
  readonly agents: ReadonlyArray<AgentNote>
}

/** One change's line in the sweep's summary. */
export interface SweepRow extends RunFacts {
  readonly changeId: string
  readonly outcome: SweepOutcome
  /** Why it ended so (the loop's last line, the error, why it did not run). */
  readonly message: string | null
  readonly durationMs: number
  /** What became of its merge: null when no merge was asked for or the change did not complete. */
  readonly merge: MergeNote | null
  /** Its merge waits for a person's approval (`--approve`); absent: it does not. */
  readonly awaitingApproval?: true
}

/** What a change awaiting a person's approval shows in its merge column, `--status` and `--list`. */
export const awaitingApprovalNote: MergeNote = { merged: false, text: "awaiting approval" }

/** What a person's word on a change's merge leaves its merge saying until the merge is made. */
export const mergeNoteOf = (approval: ApprovalNote): MergeNote =>
  approval.decision === "awaiting"
    ? awaitingApprovalNote
    : approval.decision === "approved"
    ? { merged: false, text: "approved, not merged yet" }
    : { merged: false, text: `rejected: ${approval.why ?? "no reason given"}` }

export interface SweepReport {
  readonly rows: ReadonlyArray<SweepRow>
  readonly ending: SweepEnding
}

/** The sum of the figures known; null when none is. */
const knownSum = (figures: ReadonlyArray<number | null>) => figures.reduce<number | null>((sum, n) => (n === null ? sum : (sum ?? 0) + n), null)

/** What a sweep's changes spent in all: each figure null when none of them reported it. */
export const sweepSpend = (report: SweepReport): SpendFigures => ({
  costUsd: knownSum(report.rows.map((row) => row.costUsd)),
  tokens: knownSum(report.rows.map((row) => row.tokens))
})

/** What each agent spent over the sweep, in the order of its lists, when a loop of it had several agents; none otherwise. */
export const sweepAgents = (report: SweepReport): ReadonlyArray<AgentSpend> =>
  report.rows.some((row) => row.agents.length > 1) ? sumAgentSpend(report.rows.map((row) => row.agents)) : []

/** The reviews of the sweep's changes (`--review`) and what the reviewers spent, summed over the sweep; null when none ran. */
export const sweepReviews = (report: SweepReport): ReviewSpend | null => sumReviewSpend(report.rows.map((row) => row.reviews))

/** What a change's loop can fail with, besides another loop's lock: an error that says what went wrong. */
export interface LoopFailure {
  readonly message: string
}

/** How a sweep runs one change and reads what it left; the CLI provides the loops, the stores and git. */
export interface SweepRunner<E extends LoopFailure, R = never> {
  /** Runs the change's loop to its end; a `LockError` (another loop has the change) makes the change busy. */
  readonly runChange: (changeId: string) => Effect.Effect<LoopResult, E | LockError, R>
  /** What the change's last run left, read from its records. */
  readonly facts: (changeId: string) => Effect.Effect<RunFacts, never, R>
  /** Brings a completed change home and says what became of it; null: no merging. */
  readonly merge: ((changeId: string) => Effect.Effect<MergeNote, never, R>) | null
  /**
   * With `--approve`: keeps a completed change from its merge until a person approves it (records
   * that it waits); null: completed changes are merged at once.
   */
  readonly awaitApproval?: ((changeId: string) => Effect.Effect<void, never, R>) | null
}

export interface SweepPlan {
  readonly changes: ReadonlyArray<{ readonly id: string; readonly readiness: Readiness }>
  /** Loops at once (`--max-parallel`). */
  readonly concurrency: number
}

/** The merge under way: a sentinel, told by its identity, never shown (an interrupted merge is worded in `finish`). */
// Stryker disable next-line BooleanLiteral,StringLiteral: only the sentinel's identity is ever read
const merging: MergeNote = { merged: false, text: "merging" }

const noFacts: RunFacts = { iterations: 0, costUsd: null, tokens: null, branch: null, lastCommit: null, agents: [] }

/** The first line of an error's message, or what it is when it has none. */
const firstLine = (error: unknown) => {
  const message = (error as { readonly message?: unknown } | null | undefined)?.message
  return typeof message === "string" && message !== "" ? message.split("\n")[0]! : String(error)
}

/**
 * How one change's loop ended other than with a result, as the sweep records it: a failure (busy
 * when another loop holds the change), or a defect, which is the change's failure too.
 */
const outcomeOfCause = <E extends LoopFailure>(cause: Cause.Cause<E | LockError>): { readonly outcome: SweepOutcome; readonly message: string } =>
  Either.match(Cause.failureOrCause(cause), {
    onLeft: (error) => ({ outcome: error instanceof LockError ? "busy" : "failed", message: firstLine(error) }),
    onRight: (defect) => ({ outcome: "failed", message: `unexpected failure: ${firstLine(Cause.squash(defect))}` })
  })

/**
 * Runs the ready changes of `plan`, up to `concurrency` at once, fail-soft: a change that fails,
 * dies with a defect or stops is recorded and the sweep goes on (an interruption ends it all).
 * Completed changes are merged one at a time, in the order they complete, each on top of the ones
 * before; a change completed earlier whose merge was not made is merged again among them (its loop
 * is not run again). A usage limit a loop gave up on is the account's: no change starts after it.
 * `report` gets the summary when the sweep ends, however it ends (interrupted too: the changes
 * running then are `interrupted`, those not reached `not-started`).
 */
export const runSweep = <E extends LoopFailure, R>(plan: SweepPlan, runner: SweepRunner<E, R>, report: (report: SweepReport) => Effect.Effect<void, never, R>) =>
  Effect.gen(function*() {
    const rows = yield* Ref.make<ReadonlyMap<string, SweepRow>>(new Map())
    const setRow = (row: SweepRow) => Ref.update(rows, (all) => new Map([...all, [row.changeId, row]]))
    const patchRow = (changeId: string, patch: Partial<SweepRow>) =>
      Ref.update(rows, (all) => {
        const row = all.get(changeId)
        return row === undefined ? all : new Map([...all, [changeId, { ...row, ...patch }]])
      })
    /** When each change started: one with no row yet when the sweep ends was still running. */
    const startedAt = yield* Ref.make<ReadonlyMap<string, number>>(new Map())
    const limited = yield* Ref.make(false)
    const merges = yield* Queue.unbounded<Option.Option<string>>()

    const skipped = (changeId: string, outcome: SweepOutcome, message: string) =>
      setRow({ changeId, outcome, message, durationMs: 0, merge: null, ...noFacts })

    const runOne = (changeId: string) =>
      Effect.gen(function*() {
        if (yield* Ref.get(limited)) return yield* skipped(changeId, "not-started", "not started: the usage limit met by an earlier change")
        const start = yield* Clock.currentTimeMillis
        yield* Ref.update(startedAt, (all) => new Map([...all, [changeId, start]]))
        const ended = yield* Effect.exit(runner.runChange(changeId))
        // Fail-soft for defects too; an interruption (Ctrl-C) is the whole sweep's.
        if (Exit.isFailure(ended) && Cause.isInterruptedOnly(ended.cause)) return yield* Effect.failCause(Cause.stripFailures(ended.cause))
        const durationMs = (yield* Clock.currentTimeMillis) - start
        const facts = yield* runner.facts(changeId)
        if (Exit.isFailure(ended)) {
          const failure = outcomeOfCause(ended.cause)
          // A busy change's records are another loop's: its row says only that it was skipped.
          return yield* setRow({ changeId, ...failure, durationMs, merge: null, ...(failure.outcome === "busy" ? noFacts : facts) })
        }
        const result = ended.value
        if (result.status === "usage-limit") yield* Ref.set(limited, true)
        yield* setRow({ changeId, outcome: result.status, message: result.message, durationMs, merge: null, ...facts })
        if (result.status !== "complete") return
        const awaitApproval = runner.merge === null ? null : runner.awaitApproval ?? null
        if (awaitApproval !== null) {
          yield* awaitApproval(changeId)
          return yield* patchRow(changeId, { merge: awaitingApprovalNote, awaitingApproval: true })
        }
        // Without a merger nobody takes from the queue: what waits there is dropped with it.
        yield* Queue.offer(merges, Option.some(changeId))
      })

    /** A change completed earlier whose merge was not made: merged again beside the others, or (no merging) listed as it stands. */
    const mergeAgain = (changeId: string, why: string) =>
      runner.merge === null
        ? skipped(changeId, "already-complete", `already complete: its loop completed; ${why}`)
        : Effect.gen(function*() {
          const { branch, lastCommit } = yield* runner.facts(changeId)
          yield* setRow({ changeId, outcome: "already-complete", message: "already complete: its loop completed", durationMs: 0, merge: null, ...noFacts, branch, lastCommit })
          yield* Queue.offer(merges, Option.some(changeId))
        })

    /** A change completed earlier whose merge waits for a person: listed as it stands, with `--merge` as waiting. */
    const stillAwaiting = (changeId: string) =>
      runner.merge === null
        ? skipped(changeId, "already-complete", "already complete: its loop completed; awaiting approval")
        : Effect.gen(function*() {
          const { branch, lastCommit } = yield* runner.facts(changeId)
          yield* setRow({
            changeId,
            outcome: "already-complete",
            message: "already complete: its loop completed",
            durationMs: 0,
            merge: awaitingApprovalNote,
            awaitingApproval: true,
            ...noFacts,
            branch,
            lastCommit
          })
        })

    const mergeAll = (merge: (changeId: string) => Effect.Effect<MergeNote, never, R>) =>
      Effect.gen(function*() {
        for (;;) {
          const next = yield* Queue.take(merges)
          if (Option.isNone(next)) return
          yield* patchRow(next.value, { merge: merging })
          // A merge that dies leaves its change unmerged, and the merges after it go on.
          const note = yield* Effect.catchAllDefect(merge(next.value), (defect) =>
            Effect.succeed<MergeNote>({ merged: false, text: `not merged: unexpected failure: ${firstLine(defect)}` }))
          yield* patchRow(next.value, { merge: note })
        }
      })

    const finish = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const done = yield* Ref.get(rows)
      const started = yield* Ref.get(startedAt)
      const all = plan.changes.map(({ id }): SweepRow => {
        const row = done.get(id)
        if (row !== undefined) return row.merge === merging ? { ...row, merge: { merged: false, text: "not merged: interrupted while merging" } } : row
        const start = started.get(id)
        return start === undefined
          ? { changeId: id, outcome: "not-started", message: null, durationMs: 0, merge: null, ...noFacts }
          : { changeId: id, outcome: "interrupted", message: null, durationMs: now - start, merge: null, ...noFacts }
      })
      const awaiting = all.filter((row) => row.awaitingApproval === true).length
      const unmerged = all.filter((row) => row.merge !== null && !row.merge.merged).length - awaiting
      return { rows: all, ending: sweepEnding(all.map((row) => row.outcome), unmerged, awaiting) } satisfies SweepReport
    })

    const merger = runner.merge === null ? null : yield* Effect.fork(mergeAll(runner.merge))
    const work = Effect.gen(function*() {
      yield* Effect.forEach(plan.changes, ({ id, readiness }) =>
        readiness._tag === "Ready"
          ? runOne(id)
          : readiness._tag === "Complete"
          ? skipped(id, "already-complete", `already complete: ${readiness.why}`)
          : readiness._tag === "Unmerged"
          ? mergeAgain(id, readiness.why)
          : readiness._tag === "AwaitingApproval"
          ? stillAwaiting(id)
          : skipped(id, "not-started", `not ready: ${readiness.why}`), { concurrency: Math.max(1, plan.concurrency) })
      yield* Queue.offer(merges, Option.none())
      if (merger !== null) yield* Fiber.join(merger)
      return yield* finish
    })
    return yield* work.pipe(
      Effect.onExit(() => Effect.flatMap(finish, report)),
      Effect.ensuring(merger === null ? Effect.void : Fiber.interrupt(merger))
    )
  })
