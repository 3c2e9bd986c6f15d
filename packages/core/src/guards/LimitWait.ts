import { Duration, Effect, Schedule, ScheduleDecision, ScheduleInterval } from "effect"
import type { HarnessEvent } from "../harness/HarnessService.js"
import { formatDuration } from "../text/Figures.js"

/** A usage limit as the harness reported it. */
export type UsageLimit = Omit<Extract<HarnessEvent, { _tag: "Limited" }>, "_tag">

/**
 * A usage limit met before, by another loop sharing the account or by this loop on an agent it
 * passed over since: it lasts until `heldUntil` (epoch ms).
 */
export interface HeldLimit {
  readonly heldUntil: number
  /** Who met it; absent: another loop. */
  readonly metBy?: "another loop" | "this loop"
}

/**
 * The longest single sleep: JavaScript timers overflow at 2^31 ms (about 24.8 days), and a longer
 * Effect sleep would never end. Longer waits are slept in pieces.
 */
export const MAX_SINGLE_SLEEP_MS = 2 ** 31 - 1

/** Waiting past a known reset by this much lets the provider's clock catch up with ours. */
export const RESET_MARGIN_MS = 60_000
const BACKOFF_FIRST_MS = 60_000
const BACKOFF_MAX_MS = 30 * 60_000
/** The shortest wait, whatever `retry-after` says: a limit never reruns the agent in a tight loop. */
const MIN_WAIT_MS = 1_000

export interface LimitWaitSettings {
  /** The most one limit may be waited for, in all; 0 does not wait. */
  readonly maxLimitWaitMs: number
  /** When the run must end (`--max-duration`), epoch ms; null without one. */
  readonly deadline: number | null
}

/** What has been waited for the current limit so far. */
export interface LimitWaitState {
  readonly waitedMs: number
  /** Waits made without a known reset time (backoffs and retry-afters): the backoff doubles with each. */
  readonly backoffs: number
}

export const noWaitYet: LimitWaitState = { waitedMs: 0, backoffs: 0 }

/**
 * What to do about a usage limit:
 * - `Wait`: sleep `delayMs`, then run the same iteration again at `resumeAt`
 * - `GiveUp`: stop now; `resumeAt` is when the loop would have resumed (null when unknown)
 */
export type LimitPlan =
  | {
    readonly _tag: "Wait"
    readonly delayMs: number
    readonly resumeAt: number
    readonly basis: "reset time" | "retry-after" | "backoff" | "another loop's limit" | "an earlier limit"
  }
  | { readonly _tag: "GiveUp"; readonly resumeAt: number | null; readonly why: string }

/** The first backoff is a minute, doubling up to half an hour. */
export const backoffMs = (backoffs: number) => Math.min(BACKOFF_FIRST_MS * 2 ** Math.min(backoffs, 30), BACKOFF_MAX_MS)

/** A time as the loop prints it: `2026-11-23T15:01:00Z`. */
export const clock = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z")

/**
 * The one policy for usage limits: wait until the reset plus a minute, or as long as the agent's
 * `retry-after` says, or else back off from a minute doubling to half an hour; never longer in all
 * than `maxLimitWaitMs`, nor past the deadline. A limit that does not reset, or whose known reset
 * lies past either, is given up at once. Another loop's limit is waited for until it lifts, as
 * the loop that met it waits, within the same caps.
 */
export const planLimitWait = (
  limit: UsageLimit | HeldLimit,
  now: number,
  state: LimitWaitState,
  settings: LimitWaitSettings
): LimitPlan => {
  if ("heldUntil" in limit) {
    const basis = limit.metBy === "this loop" ? "an earlier limit" : "another loop's limit"
    return planKnownWait({ delayMs: Math.max(0, limit.heldUntil - now), basis }, now, state, settings)
  }
  const known = limit.resetAt !== null
    ? { delayMs: Math.max(0, limit.resetAt - now) + RESET_MARGIN_MS, basis: "reset time" as const }
    : limit.retryAfterMs !== null
    ? {
      // The first retry-after is honoured; one that keeps coming back is backed off like an unknown reset.
      delayMs: Math.max(MIN_WAIT_MS, limit.retryAfterMs, state.backoffs === 0 ? 0 : backoffMs(state.backoffs - 1)),
      basis: "retry-after" as const
    }
    : null
  if (!limit.resets) {
    // The agent may still say when to try again (a new billing period): that is when the loop would resume.
    return { _tag: "GiveUp", resumeAt: known === null ? null : now + known.delayMs, why: "the usage limit does not reset by waiting" }
  }
  if (known !== null) return planKnownWait(known, now, state, settings)
  const { budget, cap } = waitBudget(now, state, settings)
  const backoff = backoffMs(state.backoffs)
  if (budget <= 0) {
    return { _tag: "GiveUp", resumeAt: now + backoff, why: `the limit did not lift within ${cap}` }
  }
  const delayMs = Math.min(backoff, budget, MAX_SINGLE_SLEEP_MS)
  return { _tag: "Wait", delayMs, resumeAt: now + delayMs, basis: "backoff" }
}

/** What is left to wait, by the tighter of `--max-limit-wait` and the deadline, and the option that sets it. */
const waitBudget = (now: number, state: LimitWaitState, settings: LimitWaitSettings) => {
  const byWaitCap = settings.maxLimitWaitMs - state.waitedMs
  const byDeadline = settings.deadline === null ? Number.POSITIVE_INFINITY : settings.deadline - now
  const cap = byWaitCap <= byDeadline
    ? settings.maxLimitWaitMs === 0
      ? "--max-limit-wait is 0"
      : `--max-limit-wait (${formatDuration(settings.maxLimitWaitMs)})`
    : "--max-duration"
  return { budget: Math.min(byWaitCap, byDeadline), cap }
}

/** A wait whose length is known: made if the budget allows it, else given up at once. */
const planKnownWait = (
  known: { readonly delayMs: number; readonly basis: Extract<LimitPlan, { _tag: "Wait" }>["basis"] },
  now: number,
  state: LimitWaitState,
  settings: LimitWaitSettings
): LimitPlan => {
  const { budget, cap } = waitBudget(now, state, settings)
  return known.delayMs <= budget
    ? { _tag: "Wait", delayMs: known.delayMs, resumeAt: now + known.delayMs, basis: known.basis }
    : { _tag: "GiveUp", resumeAt: now + known.delayMs, why: `the limit lifts at ${clock(now + known.delayMs)}, past ${cap}` }
}

/**
 * The limit policy as a `Schedule` fed each limit met for one iteration, by the agent or by another
 * loop: it sleeps each planned wait and is done at the first `GiveUp`, which is its last output.
 */
export const limitWaits = (settings: LimitWaitSettings): Schedule.Schedule<LimitPlan, UsageLimit | HeldLimit> =>
  Schedule.makeWithState(noWaitYet, (now, limit: UsageLimit | HeldLimit, state) => {
    const plan: LimitPlan = planLimitWait(limit, now, state, settings)
    if (plan._tag === "GiveUp") return Effect.succeed([state, plan as LimitPlan, ScheduleDecision.done] as const)
    const next: LimitWaitState = {
      waitedMs: state.waitedMs + plan.delayMs,
      // Only waits of unknown length back off.
      backoffs: state.backoffs + (plan.basis === "retry-after" || plan.basis === "backoff" ? 1 : 0)
    }
    return Effect.succeed([next, plan as LimitPlan, ScheduleDecision.continueWith(ScheduleInterval.after(now + plan.delayMs))] as const)
  })

/** The pieces a long sleep is cut into, each below the timers' limit. */
export const sleepPieces = (ms: number): Array<number> => {
  const pieces: Array<number> = []
  for (let left = Math.max(0, ms); left > 0; left -= MAX_SINGLE_SLEEP_MS) pieces.push(Math.min(left, MAX_SINGLE_SLEEP_MS))
  return pieces
}

/** Sleeps `ms`, however long, in pieces no timer overflows on. */
// Stryker disable next-line ObjectLiteral,BooleanLiteral: without discard the sleeps' results are gathered in an array that the one caller drops (it maps the sleep to its own value)
export const sleepLong = (ms: number) => Effect.forEach(sleepPieces(ms), (piece) => Effect.sleep(Duration.millis(piece)), { discard: true })
