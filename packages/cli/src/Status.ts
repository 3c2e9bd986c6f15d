import { FileSystem, Path } from "@effect/platform"
import {
  addCost,
  countTokens,
  type ChangeId,
  formatDuration,
  formatProgress,
  HistoryStore,
  type IterationRecord,
  type LoopState,
  parseTasks,
  promiseFate,
  type TaskList,
  Workspace
} from "@spool/core"
import { Effect, Option } from "effect"
import { type Palette, palette, stdoutPalette } from "./Colour.js"
import { UsageError } from "./UsageError.js"

const RECENT = 10

export interface StatusReport {
  readonly changeId: ChangeId
  readonly state: LoopState | null
  readonly history: ReadonlyArray<IterationRecord>
  readonly skipped: number
  readonly tasks: TaskList
}

export const loadStatus = (changeId: ChangeId) =>
  Effect.gen(function*() {
    const store = yield* HistoryStore
    const state = Option.getOrNull(yield* store.readState(changeId))
    const { records, skipped } = yield* store.recent(changeId, RECENT)
    const workspace = yield* Workspace
    const path = yield* Path.Path
    const fs = yield* FileSystem.FileSystem
    const tasksIn = (root: string) => fs.readFileString(path.join(root, ".spool", "changes", changeId, "tasks.md"))
    // A loop in a worktree ticks the tasks there; the main work tree's copy is the fallback.
    const tasksText = yield* (state?.worktree === undefined ? tasksIn(workspace.root) : tasksIn(state.worktree)).pipe(
      Effect.orElse(() => tasksIn(workspace.root)),
      Effect.orElseSucceed(() => null)
    )
    return { changeId, state, history: records, skipped, tasks: parseTasks(tasksText) } satisfies StatusReport
  })

const totals = (records: ReadonlyArray<IterationRecord>) => {
  const used = records.filter((r) => r.usage !== null)
  if (used.length === 0) return null
  return {
    tokens: used.reduce((n, r) => n + countTokens(r.usage!), 0),
    cost: used.reduce<number | null>((n, r) => addCost(n, r.usage!.cost), null)
  }
}

export const statusJson = (report: StatusReport) => ({
  changeId: report.changeId,
  run: report.state?.run ?? null,
  iteration: report.state?.iteration ?? 0,
  status: report.state?.status ?? "none",
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
  usage: totals(report.history),
  tasks: {
    total: report.tasks.tasks.length,
    complete: report.tasks.tasks.filter((t) => t.status === "complete").length,
    shelved: report.tasks.tasks.filter((t) => t.status === "shelved").length
  },
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
    warnings: r.warnings
  }))
})

const pad = (text: string, width: number) => text.padEnd(width)

const dollars = (usd: number) => `$${usd.toFixed(usd < 1 ? 4 : 2)}`

/** Spend against the caps, and the breakers' counters: `$0.42 of $5.00 · 15200 tokens · 1h02m of 8h00m · stall 2/5 · failures 0/5`. */
const guardsLine = (state: LoopState) => {
  const g = state.guards
  if (g === null) return null
  const of = (spent: string, cap: string | null) => (cap === null ? spent : `${spent} of ${cap}`)
  const elapsed = Date.parse(state.updatedAt) - Date.parse(state.startedAt)
  return [
    of(g.costUsd === null ? "cost unknown" : dollars(g.costUsd), g.maxCostUsd === null ? null : dollars(g.maxCostUsd)),
    of(`${g.tokens} tokens`, g.maxTokens === null ? null : String(g.maxTokens)),
    of(formatDuration(Number.isFinite(elapsed) ? elapsed : 0), g.maxDurationMs === null ? null : formatDuration(g.maxDurationMs)),
    g.stallIterations === 0 ? "stall breaker off" : `stall ${g.stalledIterations}/${g.stallIterations}`,
    g.maxConsecutiveFailures === 0 ? "failure breaker off" : `failures ${g.consecutiveFailures}/${g.maxConsecutiveFailures}`,
    g.maxLimitWaitMs === 0 ? "usage limits not waited for" : `usage limits waited up to ${formatDuration(g.maxLimitWaitMs)}`
  ].join(" · ")
}

const promiseColumn = (r: IterationRecord) => {
  const fate = promiseFate(r)
  return fate === "none" ? "-" : fate
}

const statusColour = (p: Palette, status: string) =>
  status === "complete"
    ? p.green(status)
    : status === "running" || status === "waiting"
    ? p.cyan(status)
    : status === "max-iterations" || status === "stopped" || status === "usage-limit"
    ? p.yellow(status)
    : p.red(status)

export const statusText = (report: StatusReport, p: Palette = palette(false)): string => {
  const lines: Array<string> = [`change:    ${report.changeId}`]
  const { state } = report
  if (state === null) {
    lines.push("status:    no loop has run for this change yet")
  } else {
    lines.push(
      `status:    ${statusColour(p, state.status)}`,
      `iteration: ${state.iteration} of at most ${state.maxIterations} (at least ${state.minIterations})`,
      `run:       ${state.run}, started ${state.startedAt}, updated ${state.updatedAt}`
    )
    if (state.branch !== undefined) lines.push(`branch:    ${state.branch}`)
    if (state.worktree !== undefined) lines.push(`worktree:  ${state.worktree}`)
    const guards = guardsLine(state)
    if (guards !== null) lines.push(`guards:    ${guards}`)
    if (state.status === "waiting" && state.resumeAt !== null) lines.push(`waiting:   for the usage limit until ${state.resumeAt}`)
    if (state.stopReason !== null) lines.push(`ended:     ${state.stopReason}${state.stopMessage === null ? "" : ` (${state.stopMessage})`}`)
    if (state.status === "usage-limit" && state.resumeAt !== null) lines.push(`resume:    run spool again after ${state.resumeAt}`)
  }
  if (report.tasks.tasks.length > 0) lines.push(`tasks:     ${formatProgress(report.tasks)}`)
  const sum = totals(report.history)
  if (sum !== null) lines.push(`usage:     ${sum.tokens} tokens, ${sum.cost === null ? "cost unknown" : `$${sum.cost.toFixed(4)}`} over the iterations below`)
  if (report.history.length > 0) {
    lines.push("", p.bold(`recent iterations (last ${report.history.length}):`))
    lines.push(
      p.dim(`  ${pad("iter", 5)}${pad("started", 22)}${pad("duration", 10)}${pad("exit", 9)}${pad("promise", 9)}${pad("changed", 9)}${pad("commit", 9)}outcome`)
    )
    let run: string | null = null
    for (const r of report.history) {
      // Iterations of several runs are told apart by a line naming each run where its iterations begin.
      if (r.run !== run) {
        run = r.run
        lines.push(p.dim(`  run ${r.run}${r.run === state?.run ? " (the latest)" : ""}`))
      }
      const exit = r.signal !== null ? r.signal : r.exitCode === null ? "-" : String(r.exitCode)
      lines.push(
        `  ${pad(String(r.iteration), 5)}${pad(r.startedAt.replace(/\.\d+Z$/, "Z"), 22)}${pad(formatDuration(r.durationMs), 10)}${
          pad(exit, 9)
        }${pad(promiseColumn(r), 9)}${pad(r.git === null ? "n/a" : String(r.git.changedFiles), 9)}${
          pad(r.commit === null ? "-" : r.commit.slice(0, 7), 9)
        }${r.outcome}`
      )
    }
  }
  if (report.skipped > 0) {
    lines.push(`(${report.skipped} damaged history line${report.skipped === 1 ? "" : "s"} skipped)`)
  }
  return lines.join("\n")
}

/** `--status` without `--change`: the one change that has loop state. */
export const onlyChangeWithState = Effect.gen(function*() {
  const withState = yield* (yield* Workspace).changesWithState
  if (withState.length === 1) return withState[0]!
  return yield* new UsageError({
    message: withState.length === 0
      ? "no change has loop state yet; name one with --change"
      : `several changes have loop state (${withState.join(", ")}); name one with --change`
  })
})

export const printStatus = (changeId: ChangeId, json: boolean) =>
  Effect.flatMap(loadStatus(changeId), (report) =>
    Effect.sync(() => console.log(json ? JSON.stringify(statusJson(report), null, 2) : statusText(report, stdoutPalette()))))
