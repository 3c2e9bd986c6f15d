/** The page's words for numbers: money, durations, spend and tasks as spool writes them everywhere (core's figures), counts, times. */
import { type AgentSpend, doneTasks, formatAgentSpend, formatDuration, formatMoney, formatSpend, formatTaskCount, tasksDone } from "@spool/core/figures"
import type { DashboardLoop } from "@spool/core"

const pad = (n: number) => (n < 10 ? "0" : "") + n

/** `450ms`, `12.3s`, `3m12s`, `1h02m`; a dash when unknown. */
export const duration = (ms: number | null): string => ms === null || Number.isNaN(ms) ? "–" : formatDuration(ms)

/** `$0.42`, `$0.0420`; a dash when unknown. */
export const money = (usd: number | null): string => usd === null ? "–" : formatMoney(usd)

/** `5,000`: digits grouped, for reading at a glance; a dash when unknown. */
export const count = (n: number | null): string => n === null ? "–" : n.toLocaleString("en-US")

/** A loop's spend in the list: `$0.13 · 5,000 tokens`, or the tokens alone; a dash when the agent reported nothing. */
export const spend = (s: DashboardLoop["spend"]): string => formatSpend(s, { tokens: (n) => count(n) + " tokens" }) || "–"

/** An agent's share of a run, as spool writes it everywhere: `claude 3 iterations $1.20`, `codex:gpt-5.5 2 iterations (cost unknown)`. */
export const agentShare = (spend: AgentSpend): string => formatAgentSpend(spend)

/** Tasks as the list shows them: done of all, `4/6`, `4/6 (1 shelved)`. */
export const taskCount = (t: DashboardLoop["tasks"]): string => formatTaskCount(tasksDone(t))

/** The share of tasks done (complete or shelved), as a CSS width. */
export const taskShare = (t: DashboardLoop["tasks"]): string => Math.round((100 * doneTasks(t)) / t.total) + "%"

/** `just now`, `42s ago`, `3m ago`, `2h ago`, `4d ago`. */
export const ago = (iso: string, now: number = Date.now()): string => {
  const at = Date.parse(iso)
  if (Number.isNaN(at)) return "–"
  const s = Math.max(0, Math.round((now - at) / 1000))
  if (s < 5) return "just now"
  if (s < 60) return s + "s ago"
  if (s < 3600) return Math.floor(s / 60) + "m ago"
  if (s < 86400) return Math.floor(s / 3600) + "h ago"
  return Math.floor(s / 86400) + "d ago"
}

/** The local time of day, `14:03:09`. */
export const clock = (iso: string): string => {
  const at = new Date(iso)
  return Number.isNaN(at.getTime()) ? "–" : pad(at.getHours()) + ":" + pad(at.getMinutes()) + ":" + pad(at.getSeconds())
}

/** A status or outcome in words: `max-iterations` reads `max iterations`. */
export const words = (status: string): string => status.replace(/-/g, " ")

const LIVE: ReadonlySet<string> = new Set(["running", "waiting"])

/** Whether a loop runs (or waits to run on): its time goes on, its output is live. */
export const isLive = (loop: DashboardLoop): boolean => LIVE.has(loop.status)

/** A loop's time, going on between its writes of the state while it runs. */
export const elapsedOf = (loop: DashboardLoop, now: number = Date.now()): number | null => {
  if (loop.elapsedMs === null) return null
  if (!isLive(loop) || loop.updatedAt === null) return loop.elapsedMs
  const since = now - Date.parse(loop.updatedAt)
  return loop.elapsedMs + (Number.isNaN(since) ? 0 : Math.max(0, since))
}
