import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { CheckResult } from "../domain/CheckResult.js"
import {
  type ChangeId,
  countTokens,
  GuardReport,
  type IterationOutcome,
  IterationRecord,
  type LoopState,
  LoopStatus,
  MergeNote,
  SettingsSource,
  StopReason
} from "../domain/Domain.js"
import type { Spend } from "../guards/Guards.js"
import { addCost } from "../domain/Usage.js"
import { asRecordedNow } from "../loop/LoopFormat.js"
import { taskCounts, type TaskList } from "../prompt/Tasks.js"
import { readTaskList } from "../tree/TreeTasks.js"
import { HistoryStore } from "../state/HistoryStore.js"
import { LoopLock } from "../state/LoopLock.js"
import { Workspace } from "../state/Workspace.js"
import { recentFailures } from "../notify/NotifyLog.js"

/** The iterations `--status` shows: the most recent ones. */
export const RECENT_ITERATIONS = 10

/** Where a change's loop stands, as its files tell: its state, its recent iterations and its tasks. */
export interface StatusReport {
  readonly changeId: ChangeId
  readonly state: LoopState | null
  /** Its recent iterations, older records read as spool records now (`asRecordedNow`). */
  readonly history: ReadonlyArray<IterationRecord>
  /** History lines in the range read that could not be decoded. */
  readonly skipped: number
  readonly tasks: TaskList
  /** The notices of the current run that could not be told (`notifications.log`), oldest first. */
  readonly notifyFailures?: ReadonlyArray<string>
  /**
   * The state says the loop runs (`running`, or `waiting` out a usage limit) but nothing runs it: no
   * live process holds its lock here (for a remote's states, no lease is held there). It was killed,
   * or its machine stopped. Absent where nothing could tell.
   */
  readonly abandoned?: boolean
}

/** Whether a loop its state says runs has nothing running it: it is none of `live` (the changes held by a live lock, or a lease). */
export const isAbandoned = (state: LoopState | null, live: ReadonlySet<string>) =>
  state !== null && (state.status === "running" || state.status === "waiting") && !live.has(state.changeId)

/** The report with whether its loop is abandoned, told by `live`; as it is without `live` (null). */
export const withLiveness = (report: StatusReport, live: ReadonlySet<string> | null): StatusReport =>
  live === null ? report : { ...report, abandoned: isAbandoned(report.state, live) }

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

/** A change's line in `--status` without `--change`: where its loop stands, in a few fields. */
export interface StatusRow {
  readonly changeId: ChangeId
  /** `abandoned`: the state says the loop runs, but no process does (`StatusReport.abandoned`). */
  readonly status: LoopStatus | "none" | "abandoned"
  /** The iteration the run is at (or ended at), and at most how many it runs; 0 and null without a state. */
  readonly iteration: number
  readonly maxIterations: number | null
  /** What the run has spent, as its guards counted it; null when the state says nothing of it, or nothing was reported. */
  readonly spend: Spend | null
  /** The outcome of the run's last recorded iteration; null before its first. */
  readonly lastOutcome: IterationOutcome | null
  /** With `--worktree`, the branch the run commits to. */
  readonly branch: string | null
  /** A run completed in a `--merge` sweep: what became of its merge; null otherwise. */
  readonly merge: MergeNote | null
}

export const statusRow = (report: StatusReport): StatusRow => {
  const { state } = report
  const guards = state?.guards ?? null
  const reported = guards !== null && (guards.costUsd !== null || guards.tokens > 0)
  // The row is of the current run: an iteration of an earlier run is not its last outcome.
  const last = report.history.filter((record) => state === null || record.run === state.run).at(-1)
  return {
    changeId: report.changeId,
    status: report.abandoned === true ? "abandoned" : state?.status ?? "none",
    iteration: state?.iteration ?? 0,
    maxIterations: state?.maxIterations ?? null,
    spend: reported ? { costUsd: guards.costUsd, tokens: guards.tokens } : null,
    lastOutcome: last?.outcome ?? null,
    branch: state?.branch ?? null,
    merge: state?.merge ?? null
  }
}

export const UsageTotals = Schema.Struct({
  tokens: Schema.Number,
  /** Null when no iteration reported a cost. */
  cost: Schema.NullOr(Schema.Number)
})
export type UsageTotals = typeof UsageTotals.Type

/** What the iterations that reported usage used in all; null when none did. */
export const usageTotals = (records: ReadonlyArray<IterationRecord>): UsageTotals | null => {
  const used = records.filter((r) => r.usage !== null)
  if (used.length === 0) return null
  return {
    tokens: used.reduce((n, r) => n + countTokens(r.usage!), 0),
    cost: used.reduce<number | null>((n, r) => addCost(n, r.usage!.cost), null)
  }
}

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
  settings: Schema.NullOr(SettingsSource),
  /** A run completed in a `--merge` sweep: what became of its merge (`merged` false until it is made); null otherwise. */
  merge: Schema.NullOr(MergeNote),
  usage: Schema.NullOr(UsageTotals),
  tasks: Schema.Struct({ total: Schema.Int, complete: Schema.Int, shelved: Schema.Int }),
  /** The notices of the current run that could not be told, one line each, oldest first. */
  notifyFailures: Schema.Array(Schema.String),
  history: Schema.Array(Schema.Struct({ ...IterationRecord.fields, verify: Schema.Array(CheckResult) }))
})
export type StatusJson = typeof StatusJson.Type

export const statusJson = (report: StatusReport): StatusJson => {
  const tasks = taskCounts(report.tasks)
  return {
    changeId: report.changeId,
    run: report.state?.run ?? null,
    iteration: report.state?.iteration ?? 0,
    status: report.state?.status ?? "none",
    abandoned: report.abandoned === true,
    branch: report.state?.branch ?? null,
    worktree: report.state?.worktree ?? null,
    minIterations: report.state?.minIterations ?? null,
    maxIterations: report.state?.maxIterations ?? null,
    startedAt: report.state?.startedAt ?? null,
    updatedAt: report.state?.updatedAt ?? null,
    stopReason: report.state?.stopReason ?? null,
    stopMessage: report.state?.stopMessage ?? null,
    resumeAt: report.state?.resumeAt ?? null,
    guards: report.state?.guards ?? null,
    settings: report.state?.settings ?? null,
    merge: report.state?.merge ?? null,
    usage: usageTotals(report.history),
    tasks: { total: tasks.total, complete: tasks.complete, shelved: tasks.shelved },
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
      verify: r.verify ?? []
    }))
  }
}
