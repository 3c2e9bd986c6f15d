import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { CheckResult } from "../domain/CheckResult.js"
import { AgentNote, ApprovalNote, type ChangeId, GuardReport, IterationRecord, LoopStatus, MergeNote, ReviewRecord, SandboxNote, SettingsSource, StopReason } from "../domain/Domain.js"
import { UsageTotals } from "../domain/Usage.js"
import { asRecordedNow } from "../loop/LoopFormat.js"
import { readTaskList } from "../tree/TreeTasks.js"
import { HistoryStore } from "../state/HistoryStore.js"
import { LoopLock } from "../state/LoopLock.js"
import { Workspace } from "../state/Workspace.js"
import { recentFailures } from "../notify/NotifyLog.js"
import { isAbandoned, type LoopReading, loopSummary } from "./LoopSummary.js"

/** The iterations `--status` shows: the most recent ones. */
export const RECENT_ITERATIONS = 10

/**
 * Where a change's loop stands, as its files tell: its state, its recent iterations (older records
 * read as spool records now, `asRecordedNow`) and its tasks; with `withLiveness`, whether it is abandoned.
 */
export interface StatusReport extends LoopReading {
  /** History lines in the range read that could not be decoded. */
  readonly skipped: number
  /** The notices of the current run that could not be told (`notifications.log`), oldest first. */
  readonly notifyFailures?: ReadonlyArray<string>
}

/** The report with whether its loop is abandoned, told by `live` (the changes something runs); as it is without `live` (null). */
export const withLiveness = (report: StatusReport, live: ReadonlySet<string> | null): StatusReport =>
  live === null
    ? report
    : { ...report, abandoned: report.state !== null && isAbandoned(report.state.status, live.has(report.state.changeId)) }

/** The changes whose loops run in live processes of this host, by their locks; null where there is no lock to read. */
export const liveChanges = Effect.flatMap(Effect.serviceOption(LoopLock), (lock) =>
  Option.isNone(lock)
    ? Effect.succeed(null)
    : Effect.map(lock.value.liveLoops, (loops): ReadonlySet<string> | null => new Set(loops.map((loop) => loop.changeId))))

/** Reads a change's status from its state directory and its tasks. */
export const loadStatus = (changeId: ChangeId) =>
  Effect.gen(function*() {
    const store = yield* HistoryStore
    const state = Option.getOrNull(yield* store.readState(changeId))
    const { records, skipped } = yield* store.recent(changeId, RECENT_ITERATIONS)
    const workspace = yield* Workspace
    const path = yield* Path.Path
    const fs = yield* FileSystem.FileSystem
    const { tree } = workspace
    const tasksIn = (root: string) => fs.readFileString(path.join(root, ...tree.changesDir.split("/"), changeId, tree.tasks))
    // A loop in a worktree ticks the tasks there; the main work tree's copy is the fallback.
    const tasksText = yield* (state?.worktree === undefined ? tasksIn(workspace.root) : tasksIn(state.worktree)).pipe(
      Effect.orElse(() => tasksIn(workspace.root)),
      Effect.orElseSucceed(() => null)
    )
    const notifyFailures = yield* recentFailures(changeId, state?.startedAt ?? null)
    return { changeId, state, history: records.map(asRecordedNow), skipped, tasks: readTaskList(tree.taskFormat, tasksText), notifyFailures } satisfies StatusReport
  })

/**
 * Every change a loop has run on (its state directory holds a state or a history; context added
 * before any loop does not count), in change-id order. Loops run with `--worktree` keep their state
 * in the main work tree too, so these are the repository's and its worktrees' loops alike.
 */
export const loadAllStatus = Effect.gen(function*() {
  const ids = yield* (yield* Workspace).changesWithState
  const reports = yield* Effect.forEach(ids, loadStatus)
  return reports.filter((report) => report.state !== null || report.history.length > 0)
})

/**
 * `spool ralph --status --json`: a change's status as one object, the same keys whether a loop has
 * run or not. Without a change, `--status --json` prints an array of these, one per change `loadAllStatus` finds.
 */
export const StatusJson = Schema.Struct({
  changeId: Schema.String,
  run: Schema.NullOr(Schema.String),
  iteration: Schema.Int,
  /** `none` before any loop has run on the change. */
  status: Schema.Union(LoopStatus, Schema.Literal("none")),
  /** The status says the loop runs (`running`, `waiting`), but nothing runs it (no live lock here; with `--remote`, no lease held there): it was killed, or its machine stopped. */
  abandoned: Schema.Boolean,
  branch: Schema.NullOr(Schema.String),
  worktree: Schema.NullOr(Schema.String),
  minIterations: Schema.NullOr(Schema.Int),
  maxIterations: Schema.NullOr(Schema.Int),
  startedAt: Schema.NullOr(Schema.String),
  updatedAt: Schema.NullOr(Schema.String),
  stopReason: Schema.NullOr(StopReason),
  stopMessage: Schema.NullOr(Schema.String),
  resumeAt: Schema.NullOr(Schema.String),
  guards: Schema.NullOr(GuardReport),
  /** The agent of the current (or last) iteration, as `agents` names it; null where the state names none (a run of one agent). */
  agent: Schema.NullOr(Schema.String),
  /** The run's agents (`--fallback`), the loop's own first: what each ran and spent (`costUsd` null: none reported), and until when a usage limit holds it; empty before they were kept. */
  agents: Schema.Array(AgentNote),
  settings: Schema.NullOr(SettingsSource),
  /** The walls the run's agent and checks ran in (`--sandbox`); null: none. */
  sandbox: Schema.NullOr(SandboxNote),
  /** A run completed in a `--merge` sweep: what became of its merge (`merged` false until it is made); null otherwise. */
  merge: Schema.NullOr(MergeNote),
  /** A run completed in a `--merge --approve` sweep: a person's word on its merge (`awaiting` until given); null otherwise. */
  approval: Schema.NullOr(ApprovalNote),
  usage: Schema.NullOr(UsageTotals),
  /** What the reviewers (`--review`) used, apart from the agents; null when none reported usage. */
  reviewUsage: Schema.NullOr(UsageTotals),
  tasks: Schema.Struct({ total: Schema.Int, complete: Schema.Int, shelved: Schema.Int }),
  /** The notices of the current run that could not be told, one line each, oldest first. */
  notifyFailures: Schema.Array(Schema.String),
  history: Schema.Array(Schema.Struct({ ...IterationRecord.fields, verify: Schema.Array(CheckResult), reviews: Schema.Array(ReviewRecord) }))
})
export type StatusJson = typeof StatusJson.Type

export const statusJson = (report: StatusReport): StatusJson => {
  const summary = loopSummary(report)
  return {
    changeId: summary.changeId,
    run: summary.run,
    iteration: summary.iteration,
    status: summary.status,
    abandoned: summary.abandoned,
    branch: summary.branch,
    worktree: summary.worktree,
    minIterations: summary.minIterations,
    maxIterations: summary.maxIterations,
    startedAt: summary.startedAt,
    updatedAt: summary.updatedAt,
    stopReason: summary.stopReason,
    stopMessage: summary.stopMessage,
    resumeAt: summary.resumeAt,
    guards: report.state?.guards ?? null,
    agent: summary.agent,
    agents: summary.agents,
    settings: report.state?.settings ?? null,
    sandbox: report.state?.sandbox ?? null,
    merge: summary.merge,
    approval: report.state?.approval ?? null,
    usage: summary.usage,
    reviewUsage: summary.reviewUsage,
    tasks: { total: summary.tasks.total, complete: summary.tasks.complete, shelved: summary.tasks.shelved },
    notifyFailures: report.notifyFailures ?? [],
    history: report.history.map((r) => ({
      run: r.run,
      iteration: r.iteration,
      startedAt: r.startedAt,
      durationMs: r.durationMs,
      exitCode: r.exitCode,
      signal: r.signal,
      completionDetected: r.completionDetected,
      promises: r.promises,
      outcome: r.outcome,
      git: r.git,
      commit: r.commit,
      usage: r.usage,
      error: r.error,
      warnings: r.warnings,
      verify: r.verify ?? [],
      reviews: r.reviews ?? [],
      ...(r.sandboxed === true ? { sandboxed: true as const } : {}),
      ...(r.agent === undefined ? {} : { agent: r.agent }),
      ...(r.harness === undefined ? {} : { harness: r.harness }),
      ...(r.model === undefined ? {} : { model: r.model })
    }))
  }
}
