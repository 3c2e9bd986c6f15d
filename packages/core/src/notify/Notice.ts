import { describeCheck, shown } from "../domain/CheckResult.js"
import type { IterationRecord, LoopState } from "../domain/Domain.js"
import { agentSpend } from "../domain/Usage.js"
import { reportedSpend } from "../guards/Guards.js"
import type { LoopEvent } from "../live/LoopEvents.js"
import { type SweepReport, type SweepRow, sweepAgents, sweepSpend } from "../sweep/Sweep.js"
import { type AgentSpend, formatSpend, formatTaskCount, type TasksDone } from "../text/Figures.js"
import { oneLine } from "../text/Text.js"

/**
 * What a person can be told of (`--notify-on`):
 * - `complete`, `max-iterations`, `failed`, `stopped` (a cap or a breaker), `deadline`,
 *   `interrupted`: a loop ended so
 * - `usage-limit`: a loop began to wait for a usage limit to lift (`resumeAt` says until when), or
 *   gave up waiting
 * - `review-rejected`: the reviewers (`--review`) turned the claim down `--max-reviews` times, which
 *   ended the loop
 * - `verify-failed`: the agent claimed completion and a `--verify` check rejected the claim
 * - `agent-switched`: with `--fallback`, the loop went on with another agent while a usage limit
 *   holds one, or went back to one whose limit has lifted (`agent` says which)
 * - `awaiting-approval`: a change a `--merge --approve` sweep completed waits for a person's approval
 * - `sweep-ended`: a sweep is over, with its summary
 */
export const NOTICE_EVENTS = [
  "complete",
  "max-iterations",
  "failed",
  "stopped",
  "deadline",
  "usage-limit",
  "review-rejected",
  "verify-failed",
  "agent-switched",
  "interrupted",
  "awaiting-approval",
  "sweep-ended"
] as const
export type NoticeEvent = (typeof NOTICE_EVENTS)[number]

/**
 * Told unless `--notify-on` says otherwise: everything but each rejected claim, which a loop that
 * goes on may meet often (a switch of agents is told at most twice a limit: off an agent and back).
 */
export const DEFAULT_NOTICE_EVENTS: ReadonlyArray<NoticeEvent> = NOTICE_EVENTS.filter((event) => event !== "verify-failed")

export const isNoticeEvent = (name: string): name is NoticeEvent => (NOTICE_EVENTS as ReadonlyArray<string>).includes(name)

/** One change's sweep line, as `sweep-ended` tells it. */
export interface NoticeSweepRow {
  readonly change: string
  readonly outcome: string
  readonly iterations: number
  readonly costUsd: number | null
  readonly tokens: number | null
  readonly branch: string | null
  readonly commit: string | null
  /** With several agents (`--fallback`): what each ran and spent in the change's run. */
  readonly agents?: ReadonlyArray<AgentSpend>
}

/** With `agent-switched`: the change of agent. */
export interface NoticeAgentSwitch {
  /** The agent of the last iteration (else the one passed over). */
  readonly from: string
  /** The agent the loop goes on with. */
  readonly to: string
  /** `limited`: `held` is passed over, a usage limit holding it; `lifted`: `held`'s limit has lifted. */
  readonly why: "limited" | "lifted"
  readonly held: string
  /** With `limited`, until when the limit holds `held` (ISO 8601); null for the rest of the run, and with `lifted`. */
  readonly until: string | null
}

/**
 * What a notifier reads on stdin and a webhook gets as its body: one JSON object. `text` (and
 * `content`, the same line) is one readable line, which chat webhooks show as it is.
 */
export interface Notice {
  readonly event: NoticeEvent
  /** The change; null for `sweep-ended`. */
  readonly change: string | null
  /** The run's id; null for `sweep-ended`. */
  readonly run: string | null
  readonly iteration: number
  readonly maxIterations: number | null
  /** Why it ended (`max-cost`, `stall`, ...), `waiting` or `gave-up` for a usage limit, the iteration's outcome for a rejected claim. */
  readonly outcome: string
  readonly message: string
  /** Spend of the run so far, as the agent reported it: null when it reported no cost. */
  readonly costUsd: number | null
  /** Tokens of the run so far: null when the agent reported none (neither tokens nor a cost), as `--status` has it. */
  readonly tokens: number | null
  /** The change's tasks: done (complete or shelved), shelved, and all of them; null when it has none. */
  readonly tasks: TasksDone | null
  readonly branch: string | null
  /** The newest commit of the run's iterations, when there is one. */
  readonly commit: string | null
  /** With `usage-limit`, when the loop goes on (or would have). */
  readonly resumeAt: string | null
  /** With several agents (`--fallback`), in a loop's own events: the agent of its last iteration (null before the first). */
  readonly lastAgent?: string | null
  /** With several agents, in a loop's own events: what each ran and spent in its run. */
  readonly agents?: ReadonlyArray<AgentSpend>
  /** With `agent-switched`: from which agent to which, and why. */
  readonly agent?: NoticeAgentSwitch
  /** With `sweep-ended`: how the sweep ended and its changes; `agents` when a loop of it had several, each summed over the sweep. */
  readonly sweep?: { readonly ending: string; readonly changes: ReadonlyArray<NoticeSweepRow>; readonly agents?: ReadonlyArray<AgentSpend> }
  /** When it happened, ISO 8601. */
  readonly time: string
  readonly text: string
  readonly content: string
}

/** A notice before it is told: what the loop's events give, without the tasks, the time and the line. */
export type NoticeDraft = Omit<Notice, "tasks" | "time" | "text" | "content">

/** What a follower of one loop remembers between events: its last state and its newest commit. */
export interface Followed {
  readonly state: LoopState | null
  readonly commit: string | null
}

export const unfollowed: Followed = { state: null, commit: null }

const stateEvents: Partial<Record<LoopState["status"], NoticeEvent>> = {
  complete: "complete",
  "max-iterations": "max-iterations",
  failed: "failed",
  stopped: "stopped",
  deadline: "deadline",
  waiting: "usage-limit",
  "usage-limit": "usage-limit",
  interrupted: "interrupted",
  "review-rejected": "review-rejected"
}

/** The run's spend; a figure the agent never reported is null, not 0 (the guards count 0 tokens until one is). */
const spendOf = (state: LoopState | null): Pick<Notice, "costUsd" | "tokens"> => reportedSpend(state?.guards ?? null)

const fromState = (state: LoopState, event: NoticeEvent, commit: string | null): NoticeDraft => {
  const waiting = state.status === "waiting"
  return {
    event,
    change: state.changeId,
    run: state.run,
    iteration: state.iteration,
    maxIterations: state.maxIterations,
    outcome: waiting ? "waiting" : state.status === "usage-limit" ? "gave-up" : state.stopReason ?? state.status,
    message: waiting
      ? `waiting for a usage limit to lift${state.resumeAt === null ? "" : ` until ${state.resumeAt}`}; the loop goes on by itself`
      : state.stopMessage ?? state.status,
    ...spendOf(state),
    branch: state.branch ?? null,
    commit,
    resumeAt: event === "usage-limit" ? state.resumeAt : null,
    ...agentsOf(state)
  }
}

/** With several agents (`--fallback`): the agent of the last iteration, and what each ran and spent; nothing with one. */
const agentsOf = (state: LoopState): Pick<Notice, "lastAgent" | "agents"> =>
  (state.agents?.length ?? 0) > 1 ? { lastAgent: state.agent ?? null, agents: state.agents!.map(agentSpend) } : {}

const rejected = (record: IterationRecord, followed: Followed, changeId: string): NoticeDraft | null => {
  const failed = (record.verify ?? []).find((check) => !check.passed)
  if (failed === undefined) return null
  const { state } = followed
  return {
    event: "verify-failed",
    change: changeId,
    run: record.run,
    iteration: record.iteration,
    maxIterations: state?.maxIterations ?? null,
    outcome: record.outcome,
    message: `the claim of completion at iteration ${record.iteration} was rejected: ${shown(failed.command)} (${describeCheck(failed)})`,
    ...spendOf(state),
    branch: state?.branch ?? null,
    commit: record.commit ?? followed.commit,
    resumeAt: null
  }
}

/** `switched from claude to codex:gpt-5.5: claude is held by its usage limit until …`, `back to claude from codex:gpt-5.5: its usage limit has lifted`. */
const switchMessage = (change: NoticeAgentSwitch) =>
  change.why === "limited"
    ? `switched from ${change.from} to ${change.to}: ${change.held} is held by its usage limit ${change.until === null ? "for the rest of the run" : `until ${change.until}`}`
    : `back to ${change.to} from ${change.from}: its usage limit has lifted`

const switched = (event: Extract<LoopEvent, { _tag: "AgentSwitched" }>, followed: Followed): NoticeDraft => {
  const { from, to, why, held, until } = event
  const { state } = followed
  const agent: NoticeAgentSwitch = { from, to, why, held, until }
  return {
    event: "agent-switched",
    change: event.changeId,
    run: event.run,
    iteration: event.iteration,
    maxIterations: state?.maxIterations ?? null,
    outcome: why,
    message: switchMessage(agent),
    ...spendOf(state),
    branch: state?.branch ?? null,
    commit: followed.commit,
    resumeAt: null,
    agent
  }
}

/**
 * What one of a loop's events tells, given what was followed of that loop before it: the notices
 * (none, mostly) and what to remember. A state tells only when its status changes (a new wait
 * is a change too); a record tells when a check rejected its claim; a switch of agents always tells.
 */
export const noticesOf = (followed: Followed, event: LoopEvent): { readonly followed: Followed; readonly notices: ReadonlyArray<NoticeDraft> } => {
  if (event._tag === "IterationRecorded") {
    const { record } = event
    const draft = rejected(record, followed, event.changeId)
    return { followed: { ...followed, commit: record.commit ?? followed.commit }, notices: draft === null ? [] : [draft] }
  }
  if (event._tag === "AgentSwitched") return { followed, notices: [switched(event, followed)] }
  const { state } = event
  const before = followed.state
  const next: Followed = {
    state,
    // A new run starts with no commit of its own.
    commit: before !== null && before.run !== state.run ? null : followed.commit
  }
  const noticed = stateEvents[state.status]
  const same = before !== null && before.run === state.run && before.status === state.status && before.resumeAt === state.resumeAt
  if (noticed === undefined || same) return { followed: next, notices: [] }
  return { followed: next, notices: [fromState(state, noticed, next.commit)] }
}

/** The one readable line of a notice: `spool: 002-01_add-ralph-loop complete at iteration 4 of 20 ($0.42, tasks 7/7): ...` */
export const noticeLine = (notice: Omit<Notice, "text" | "content">): string => {
  const spend = formatSpend(notice, { separator: ", " })
  const facts = [
    ...(spend === "" ? [] : [spend]),
    ...(notice.tasks === null || notice.tasks.total === 0 ? [] : [`tasks ${formatTaskCount(notice.tasks)}`])
  ]
  const where = notice.change === null
    ? "sweep ended"
    : `${notice.change} ${notice.event} at iteration ${notice.iteration}${notice.maxIterations === null ? "" : ` of ${notice.maxIterations}`}`
  return oneLine(`spool: ${where}${facts.length === 0 ? "" : ` (${facts.join(", ")})`}: ${notice.message}`, 300)
}

/**
 * `awaiting-approval`: a change the sweep completed waits for a person before its merge into
 * `base`; the line says how to approve or reject it.
 */
export const approvalNotice = (row: SweepRow, base: string): NoticeDraft => ({
  event: "awaiting-approval",
  change: row.changeId,
  run: null,
  iteration: row.iterations,
  maxIterations: null,
  outcome: "awaiting-approval",
  message: `complete, awaiting approval before its merge into ${base}: spool ralph --approve ${row.changeId}, or --reject ${row.changeId} "<why>" to run it again`,
  costUsd: row.costUsd,
  tokens: row.tokens,
  branch: row.branch,
  commit: row.lastCommit,
  resumeAt: null
})

/** `sweep-ended`: how the sweep ended, what it spent, and a line for each of its changes. */
export const sweepNotice = (report: SweepReport): NoticeDraft => {
  const counts = new Map<string, number>()
  for (const row of report.rows) counts.set(row.outcome, (counts.get(row.outcome) ?? 0) + 1)
  const changes = report.rows.map((row): NoticeSweepRow => ({
    change: row.changeId,
    outcome: row.outcome,
    iterations: row.iterations,
    costUsd: row.costUsd,
    tokens: row.tokens,
    branch: row.branch,
    commit: row.lastCommit,
    ...(row.agents.length > 1 ? { agents: row.agents.map(agentSpend) } : {})
  }))
  const agents = sweepAgents(report)
  const n = report.rows.length
  return {
    event: "sweep-ended",
    change: null,
    run: null,
    iteration: report.rows.reduce((sum, row) => sum + row.iterations, 0),
    maxIterations: null,
    outcome: report.ending,
    message: `${report.ending}: ${n} change${n === 1 ? "" : "s"}${n === 0 ? "" : ` (${[...counts].map(([outcome, k]) => `${k} ${outcome}`).join(", ")})`}`,
    ...sweepSpend(report),
    branch: null,
    commit: null,
    resumeAt: null,
    sweep: { ending: report.ending, changes, ...(agents.length === 0 ? {} : { agents }) }
  }
}
