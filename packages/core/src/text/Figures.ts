/**
 * How spool writes its figures, in every view (`--status`, `--list`, the sweep's summary, the status
 * line, notices, the dashboard's page): money, durations, tokens, spend and task counts. A leaf,
 * importing nothing, so that the page's script can bundle it for the browser.
 */

/** `value` rounded half up at `places` decimals, as written: float noise (1.005 held as 1.00499…) does not tip it down. */
const roundedTo = (value: number, places: number) => {
  const scale = 10 ** places
  return Math.round(Number((value * scale).toPrecision(12))) / scale
}

/** A duration is never negative, nor anything but a number: what is not counts as none. */
const asDuration = (ms: number) => (Number.isFinite(ms) && ms > 0 ? ms : 0)

/** `450ms`, `12.3s`, `3m12s`, `1h02m`: each unit chosen by the rounded figure, so 59.96 seconds is `1m00s`, not `60.0s`. */
export const formatDuration = (given: number): string => {
  const ms = asDuration(given)
  if (Math.round(ms) < 1000) return `${Math.round(ms)}ms`
  const tenths = Math.round(ms / 100)
  if (tenths < 600) return `${(tenths / 10).toFixed(1)}s`
  const totalSeconds = Math.round(ms / 1000)
  const hours = Math.floor(totalSeconds / 3600)
  const minutes = Math.floor((totalSeconds % 3600) / 60)
  const seconds = totalSeconds % 60
  return hours > 0
    ? `${hours}h${String(minutes).padStart(2, "0")}m`
    : `${minutes}m${String(seconds).padStart(2, "0")}s`
}

/**
 * US dollars: cents from ten cents up (`$0.42`, `$5.00`, `$18.20`), four decimals below, where an
 * iteration of a cheap model costs a fraction of a cent (`$0.0420`, `$0.0004`). Rounded half up.
 */
export const formatMoney = (usd: number): string => {
  const fine = roundedTo(usd, 4)
  return Math.abs(fine) >= 0.1 ? `$${roundedTo(usd, 2).toFixed(2)}` : `$${fine.toFixed(4)}`
}

/** A cost, or `cost unknown` when the agent reported none. */
export const formatCost = (usd: number | null): string => (usd === null ? "cost unknown" : formatMoney(usd))

/** `15200 tokens`: the exact count. */
export const formatTokens = (n: number): string => `${n} tokens`

/** `15.2k tokens` (`900 tokens` below a thousand): for a line redrawn in place, or a table's column. */
export const formatTokensShort = (n: number): string => (n >= 1000 ? `${roundedTo(n / 1000, 1).toFixed(1)}k tokens` : formatTokens(n))

/** What a run (or a sweep) spent: each figure null when the agent reported none. */
export interface SpendFigures {
  readonly costUsd: number | null
  readonly tokens: number | null
}

/**
 * `$0.42 · 15200 tokens`: the cost when it is known, the tokens when there are any; empty when
 * nothing was reported (each view says that its own way: `-`, or nothing).
 */
export const formatSpend = (
  spend: SpendFigures | null,
  options: { readonly separator?: string; readonly tokens?: (n: number) => string } = {}
): string => {
  if (spend === null) return ""
  const tokens = options.tokens ?? formatTokens
  return [
    ...(spend.costUsd === null ? [] : [formatMoney(spend.costUsd)]),
    ...(spend.tokens === null || spend.tokens === 0 ? [] : [tokens(spend.tokens)])
  ].join(options.separator ?? " · ")
}

/** A change's tasks: complete, shelved (given up on purpose), and all of them. */
export interface TaskCounts {
  readonly complete: number
  readonly shelved: number
  readonly total: number
}

/** Tasks as a list or a notice gives them: those done (complete or shelved: none holds the change open), the shelved among them, all. */
export interface TasksDone {
  readonly done: number
  readonly shelved: number
  readonly total: number
}

/** The tasks done: complete or shelved. */
export const doneTasks = (counts: TaskCounts): number => counts.complete + counts.shelved

export const tasksDone = (counts: TaskCounts): TasksDone => ({ done: doneTasks(counts), shelved: counts.shelved, total: counts.total })

/** `4/7`, `4/7 (1 shelved)`: the tasks done of all, the shelved among them named. */
export const formatTaskCount = (tasks: TasksDone): string =>
  `${tasks.done}/${tasks.total}${tasks.shelved > 0 ? ` (${tasks.shelved} shelved)` : ""}`

/** `3/7 complete`, `3/7 complete, 1 shelved`: the tasks complete of all, and the shelved ones beside them. */
export const formatTaskProgress = (counts: TaskCounts): string =>
  `${counts.complete}/${counts.total} complete${counts.shelved > 0 ? `, ${counts.shelved} shelved` : ""}`

/** What one agent of a run's list (or of a sweep's loops) ran and spent: each figure null while it reported none. */
export interface AgentSpend {
  readonly agent: string
  readonly iterations: number
  readonly costUsd: number | null
  readonly tokens: number | null
}

/**
 * `claude 3 iterations $1.20`, `codex:gpt-5.5 2 iterations (15.2k tokens, cost unknown)`,
 * `pi 1 iteration (cost unknown)`; an agent that ran no iteration spent nothing: `gemini 0 iterations`.
 */
export const formatAgentSpend = (spend: AgentSpend): string => {
  const ran = `${spend.agent} ${spend.iterations} iteration${spend.iterations === 1 ? "" : "s"}`
  if (spend.iterations === 0 && spend.costUsd === null) return ran
  if (spend.costUsd !== null) return `${ran} ${formatMoney(spend.costUsd)}`
  return `${ran} (${spend.tokens === null || spend.tokens === 0 ? "" : `${formatTokensShort(spend.tokens)}, `}cost unknown)`
}

/** Several agents on one line: `claude 3 iterations $1.20, codex:gpt-5.5 2 iterations (cost unknown)`. */
export const formatAgentsSpend = (agents: ReadonlyArray<AgentSpend>): string => agents.map(formatAgentSpend).join(", ")

/** What a run's (or a sweep's) reviews (`--review`) came to: how many, how many approved, and what the reviewers spent, each figure null while none reported it. */
export interface ReviewSpend {
  readonly reviews: number
  readonly approved: number
  readonly costUsd: number | null
  readonly tokens: number | null
}

/**
 * `3 (1 approved), $0.31, 12.0k tokens`, `2 (0 approved), cost unknown`: the reviews, those that
 * approved, the reviewers' cost (or that it is unknown) and their tokens when there are any.
 */
export const formatReviewSpend = (spend: ReviewSpend): string =>
  [
    `${spend.reviews} (${spend.approved} approved)`,
    formatCost(spend.costUsd),
    ...(spend.tokens === null || spend.tokens === 0 ? [] : [formatTokensShort(spend.tokens)])
  ].join(", ")
