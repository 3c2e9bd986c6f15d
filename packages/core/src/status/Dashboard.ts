import { incompleteTail } from "../bytes/Utf8Tail.js"
import type { CheckResult } from "../domain/CheckResult.js"
import { type AgentNote, countTokens, type IterationOutcome, type IterationRecord, type LoopState, type ReviewRecord, type ReviewVerdict, type SandboxNote, type StopReason } from "../domain/Domain.js"
import { reviewSpend } from "../domain/Usage.js"
import type { ReviewSpend, SpendFigures, TaskCounts } from "../text/Figures.js"
import { type LoopReading, type LoopSummary, loopSummary } from "./LoopSummary.js"

/** The end of a running (or the last) iteration's log the dashboard shows. */
export const OUTPUT_TAIL_BYTES = 64 * 1024
/** The end of the error journal the dashboard shows. */
export const JOURNAL_TAIL_BYTES = 32 * 1024
/** The iterations a change's page charts and lists: the most recent ones. */
export const DASHBOARD_ITERATIONS = 100

/** A loop as the dashboard's list shows it: one row, everything a person checks at a glance. */
export interface DashboardLoop {
  readonly changeId: string
  /** `abandoned`: the state says the loop runs, but no process does. */
  readonly status: LoopSummary["shownStatus"]
  readonly iteration: number
  readonly maxIterations: number | null
  /** The run's time as of `updatedAt`, over all its sittings; null without a state. */
  readonly elapsedMs: number | null
  /** As its guards counted it; each figure null while the agent reported none. */
  readonly spend: SpendFigures
  /** Tasks of `tasks.md`: complete, shelved, and all of them. */
  readonly tasks: TaskCounts
  readonly lastOutcome: IterationOutcome | null
  readonly branch: string | null
  /** A completed run whose merge is not made: why (`awaiting approval`, `not merged: conflict in a.ts`); null otherwise. */
  readonly notMerged: string | null
  readonly updatedAt: string | null
  /** Why the loop's files could not be read, when they could not; the rest is then empty. */
  readonly problem: string | null
}

/** One review of an iteration's claim (`--review`), as the change's page lists it. */
export interface DashboardReview {
  /** As `--review` names it. */
  readonly reviewer: string
  readonly verdict: ReviewVerdict
  /** What the reviewer asked for, or why it gave no verdict; null with an approval. */
  readonly findings: string | null
  readonly durationMs: number
  /** Null when the reviewer reported none. */
  readonly costUsd: number | null
  readonly tokens: number | null
}

/** One iteration as the change's page lists and charts it. */
export interface DashboardIteration {
  readonly run: string
  readonly iteration: number
  readonly startedAt: string
  readonly outcome: IterationOutcome
  readonly durationMs: number
  readonly exitCode: number | null
  readonly signal: string | null
  /** Null when the agent reported none. */
  readonly costUsd: number | null
  readonly tokens: number | null
  /** Null when git could not say. */
  readonly changedFiles: number | null
  readonly commit: string | null
  readonly checks: ReadonlyArray<CheckResult>
  /** What the agent reported when its run failed. */
  readonly error: string | null
  /** The agent that ran it, as the run's list names it; null in records written before it was kept. */
  readonly agent: string | null
  /** The reviews of its claim, in the order they ran; none when no review ran. */
  readonly reviews: ReadonlyArray<DashboardReview>
}

/** The end of a text file, as the page shows it. */
export interface TextTail {
  readonly text: string
  /** Whether earlier text was left out. */
  readonly truncated: boolean
}

/** The output of the running (or last) iteration, as its log holds it so far. */
export interface DashboardOutput extends TextTail {
  readonly run: string
  readonly iteration: number
}

/** One change's page: its row, its run, its iterations, its checks, its journal and its agent's output. */
export interface DashboardDetail {
  readonly loop: DashboardLoop
  readonly run: string | null
  readonly startedAt: string | null
  readonly worktree: string | null
  readonly stopReason: StopReason | null
  readonly stopMessage: string | null
  readonly resumeAt: string | null
  /** The walls the run's agent and checks ran in (`--sandbox`); null: none. */
  readonly sandbox: SandboxNote | null
  /** The agent of the current (or last) iteration; null where the state names none (a run of one agent). */
  readonly agent: string | null
  /** The run's agents, in order, with what each ran and spent (the page shows them when there are several). */
  readonly agents: ReadonlyArray<AgentNote>
  /** The current run's reviews (`--review`) of the iterations the page holds: how many, how many approved, and what the reviewers spent (in the run's spend, shown apart); null when none ran. */
  readonly reviews: ReviewSpend | null
  /** Oldest first, of every run the history's tail holds. */
  readonly iterations: ReadonlyArray<DashboardIteration>
  readonly journal: TextTail
  readonly output: DashboardOutput | null
}

/** A change's row: the fields of `--status`'s line, with its time, its tasks and when it last moved. */
export const dashboardLoop = (summary: LoopSummary): DashboardLoop => ({
  changeId: summary.changeId,
  status: summary.shownStatus,
  iteration: summary.iteration,
  maxIterations: summary.maxIterations,
  elapsedMs: summary.elapsedMs,
  spend: summary.spend,
  tasks: summary.tasks,
  lastOutcome: summary.lastOutcome,
  branch: summary.branch,
  notMerged: summary.merge !== null && !summary.merge.merged ? summary.merge.text : null,
  updatedAt: summary.updatedAt,
  problem: null
})

/** The row of a change whose loop files could not be read: named, with the reason, and nothing else. */
export const unreadableLoop = (changeId: string, problem: string): DashboardLoop => ({
  changeId,
  status: "none",
  iteration: 0,
  maxIterations: null,
  elapsedMs: null,
  spend: { costUsd: null, tokens: null },
  tasks: { complete: 0, shelved: 0, total: 0 },
  lastOutcome: null,
  branch: null,
  notMerged: null,
  updatedAt: null,
  problem
})

export const dashboardReview = (review: ReviewRecord): DashboardReview => ({
  reviewer: review.reviewer,
  verdict: review.verdict,
  findings: review.findings,
  durationMs: review.durationMs,
  costUsd: review.usage?.cost ?? null,
  tokens: review.usage === null ? null : countTokens(review.usage)
})

export const dashboardIteration = (record: IterationRecord): DashboardIteration => ({
  run: record.run,
  iteration: record.iteration,
  startedAt: record.startedAt,
  outcome: record.outcome,
  durationMs: record.durationMs,
  exitCode: record.exitCode,
  signal: record.signal,
  costUsd: record.usage?.cost ?? null,
  tokens: record.usage === null ? null : countTokens(record.usage),
  changedFiles: record.git?.changedFiles ?? null,
  commit: record.commit,
  checks: record.verify ?? [],
  error: record.error,
  agent: record.agent ?? null,
  reviews: (record.reviews ?? []).map(dashboardReview)
})

/** A change's page from its loop (with as much history as it should chart), its journal's end and its log's. */
export const dashboardDetail = (
  reading: LoopReading,
  files: { readonly journal: TextTail; readonly output: DashboardOutput | null }
): DashboardDetail => {
  const summary = loopSummary(reading)
  return {
    loop: dashboardLoop(summary),
    run: summary.run,
    startedAt: summary.startedAt,
    worktree: summary.worktree,
    stopReason: summary.stopReason,
    stopMessage: summary.stopMessage,
    resumeAt: summary.resumeAt,
    sandbox: reading.state?.sandbox ?? null,
    agent: summary.agent,
    agents: summary.agents,
    reviews: reviewSpend(reading.history.filter((record) => record.run === summary.run)),
    iterations: reading.history.map(dashboardIteration),
    journal: files.journal,
    output: files.output
  }
}

/** The page of a change whose loop files could not be read: its row says why. */
export const unreadableDetail = (changeId: string, problem: string): DashboardDetail => ({
  loop: unreadableLoop(changeId, problem),
  run: null,
  startedAt: null,
  worktree: null,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  sandbox: null,
  agent: null,
  agents: [],
  reviews: null,
  iterations: [],
  journal: { text: "", truncated: false },
  output: null
})

/**
 * The harness whose output the log of the state's iteration holds, so that it is read as that
 * harness showed it: its record's, once it is recorded; while it runs, that of the agent the state
 * names; else (a run of one agent, or records written before agents were kept) the run's.
 */
export const harnessOfLog = (state: LoopState, history: ReadonlyArray<IterationRecord>): string | undefined => {
  const record = history.filter((r) => r.run === state.run && r.iteration === state.iteration).at(-1)
  if (record?.harness !== undefined) return record.harness
  const running = state.agent === undefined ? undefined : state.agents?.find((note) => note.agent === state.agent)
  return running?.harness ?? state.harness
}

const decoder = new TextDecoder()

/**
 * The last bytes of a file as text: `fromStart` when they are the whole file. A cut file loses
 * its first, partial line (and so never starts inside a character); a character cut at the end,
 * still being written, waits for the next read.
 */
export const decodeTail = (bytes: Uint8Array, fromStart: boolean): TextTail => {
  const whole = bytes.subarray(0, bytes.length - incompleteTail(bytes))
  if (fromStart) return { text: decoder.decode(whole), truncated: false }
  const newline = whole.indexOf(10)
  return { text: newline === -1 ? "" : decoder.decode(whole.subarray(newline + 1)), truncated: true }
}

/** The line the iteration log puts between the prompt and the agent's output. */
const OUTPUT_MARK = "\n=== output ===\n"

/**
 * The agent's output in the end of an iteration log: what follows the prompt. A tail that does not
 * reach back to the prompt is output throughout.
 */
export const iterationOutput = (tail: TextTail): TextTail => {
  const mark = tail.text.indexOf(OUTPUT_MARK)
  if (mark !== -1) return { text: tail.text.slice(mark + OUTPUT_MARK.length), truncated: false }
  return tail.truncated ? tail : { text: tail.text.startsWith("=== prompt") ? "" : tail.text, truncated: false }
}

/** The line that opens each entry of the error journal: a marker for spool, not for the reader. */
const ENTRY_MARK = /^<!-- spool:error-entry -->\n/gm

/** The end of the error journal, its entry markers left out. */
export const journalText = (tail: TextTail): TextTail => ({ text: tail.text.replace(ENTRY_MARK, ""), truncated: tail.truncated })
