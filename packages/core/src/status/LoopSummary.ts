import type { AgentNote, ChangeId, IterationOutcome, IterationRecord, LoopState, LoopStatus, MergeNote, StopReason } from "../domain/Domain.js"
import { reviewCounts, reviewTotals, type UsageTotals, usageTotals } from "../domain/Usage.js"
import { reportedSpend } from "../guards/Guards.js"
import { taskCounts, type TaskList } from "../prompt/Tasks.js"
import type { SpendFigures, TaskCounts } from "../text/Figures.js"

/** What a loop's summary is made of: its state, the records read of its history, its tasks, and whether nothing runs it. */
export interface LoopReading {
  readonly changeId: ChangeId
  readonly state: LoopState | null
  /** Oldest first; of one run or several. */
  readonly history: ReadonlyArray<IterationRecord>
  readonly tasks: TaskList
  /** Told by `isAbandoned`; absent where nothing could tell. */
  readonly abandoned?: boolean
}

/**
 * Whether a loop is abandoned: its state says it runs (`running`, or `waiting` out a usage limit)
 * and nothing holds it (no live process holds its lock here; for a remote's loops, no lease is
 * held there). It was killed, or its machine stopped.
 */
export const isAbandoned = (status: LoopStatus | null, held: boolean): boolean =>
  (status === "running" || status === "waiting") && !held

/**
 * A change's loop in one value, which every view of it (`--status` and its list, `--status --json`,
 * the dashboard, the sweep's facts) is derived from. A figure not known is null, never 0.
 */
export interface LoopSummary {
  readonly changeId: ChangeId
  /** What the state says; `none` before any loop has run on the change. */
  readonly status: LoopStatus | "none"
  /** The state says the loop runs, but nothing runs it (`isAbandoned`); false where nothing could tell. */
  readonly abandoned: boolean
  /** The status a line shows: `abandoned` for an abandoned loop, the state's otherwise. */
  readonly shownStatus: LoopStatus | "none" | "abandoned"
  readonly run: string | null
  /** The iteration the run is at (or ended at): 0 without a state. */
  readonly iteration: number
  readonly minIterations: number | null
  readonly maxIterations: number | null
  readonly startedAt: string | null
  readonly updatedAt: string | null
  /** The run's time as of `updatedAt`, over all its sittings; null without a state, or with times that cannot be read. */
  readonly elapsedMs: number | null
  /** What the run has spent, as its guards counted it. */
  readonly spend: SpendFigures
  /** What the iterations read used in all (of every run they hold); null when none reported usage. */
  readonly usage: UsageTotals | null
  /** What their reviews (`--review`) used, apart; null when none reported usage. */
  readonly reviewUsage: UsageTotals | null
  /** How many reviews their claims had, and how many approved. */
  readonly reviews: { readonly reviews: number; readonly approved: number }
  readonly tasks: TaskCounts
  /** The outcome of the run's last recorded iteration; null before its first. */
  readonly lastOutcome: IterationOutcome | null
  /** The newest commit of the run's recorded iterations; null when they made none. */
  readonly lastCommit: string | null
  /** With `--worktree`, the branch the run commits to and its worktree. */
  readonly branch: string | null
  readonly worktree: string | null
  /** A run completed in a `--merge` sweep: what became of its merge; null otherwise. */
  readonly merge: MergeNote | null
  readonly stopReason: StopReason | null
  readonly stopMessage: string | null
  /** While waiting out a usage limit, when the loop goes on; after one not waited out, when it would have. */
  readonly resumeAt: string | null
  /** The agent of the current (or last) iteration, as the state names it; null where it names none (a run of one agent). */
  readonly agent: string | null
  /** The run's agents, in order, with what each ran and spent; none in state written before they were kept. */
  readonly agents: ReadonlyArray<AgentNote>
}

/** Whether a view shows the run's agents one by one: only when it had several, so a run of one agent reads as ever. */
export const hasSeveralAgents = (summary: Pick<LoopSummary, "agents">): boolean => summary.agents.length > 1

const millis = (iso: string) => {
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? null : ms
}

/** A resumed run's time is that of its sittings (kept in its state), not the hours between them; older states give their span. */
const elapsedOf = (state: LoopState): number | null => {
  if (state.elapsedMs !== undefined) return state.elapsedMs
  const started = millis(state.startedAt)
  const updated = millis(state.updatedAt)
  return started === null || updated === null ? null : Math.max(0, updated - started)
}

export const loopSummary = (reading: LoopReading): LoopSummary => {
  const { state } = reading
  const abandoned = reading.abandoned === true
  // The summary is of the current run: an iteration of an earlier run is not its last.
  const ofRun = reading.history.filter((record) => state === null || record.run === state.run)
  return {
    changeId: reading.changeId,
    status: state?.status ?? "none",
    abandoned,
    shownStatus: abandoned ? "abandoned" : state?.status ?? "none",
    run: state?.run ?? null,
    iteration: state?.iteration ?? 0,
    minIterations: state?.minIterations ?? null,
    maxIterations: state?.maxIterations ?? null,
    startedAt: state?.startedAt ?? null,
    updatedAt: state?.updatedAt ?? null,
    elapsedMs: state === null ? null : elapsedOf(state),
    spend: reportedSpend(state?.guards ?? null),
    usage: usageTotals(reading.history),
    reviewUsage: reviewTotals(reading.history),
    reviews: reviewCounts(reading.history),
    tasks: taskCounts(reading.tasks),
    lastOutcome: ofRun.at(-1)?.outcome ?? null,
    lastCommit: [...ofRun].reverse().find((record) => record.commit !== null)?.commit ?? null,
    branch: state?.branch ?? null,
    worktree: state?.worktree ?? null,
    merge: state?.merge ?? null,
    stopReason: state?.stopReason ?? null,
    stopMessage: state?.stopMessage ?? null,
    resumeAt: state?.resumeAt ?? null,
    agent: state?.agent ?? null,
    agents: state?.agents ?? []
  }
}
