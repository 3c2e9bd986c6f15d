/*
 * Usage and rate limits, recognised only in what claude reports as errors: a rejected
 * `rate_limit_event`, or the text and HTTP status of a failed run. Never in the agent's own words.
 */
import { firstLine as firstLineOf } from "@spool/core"

export interface ClaudeLimit {
  readonly message: string
  /** When the limit lifts (epoch ms), when claude says so. */
  readonly resetAt: number | null
  /** False for a quota that waiting does not restore (no credits left). */
  readonly resets: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A time since the epoch in seconds or milliseconds (a number or a string of digits), as milliseconds. */
export const epochMs = (value: unknown): number | null => {
  const n = typeof value === "number"
    ? value
    : typeof value === "string" && /^\d+(\.\d+)?$/.test(value.trim())
    ? Number(value)
    : Number.NaN
  if (!Number.isFinite(n) || n <= 0) return null
  // 1e11 seconds is the year 5138; 1e11 milliseconds is 1973.
  return Math.round(n < 1e11 ? n * 1000 : n)
}

const resetsAtText = (resetAt: number | null) => resetAt === null ? "" : `; it resets at ${new Date(resetAt).toISOString()}`

/**
 * A `rate_limit_event` whose status is `rejected`; null for any other status (`allowed`,
 * `allowed_warning`). The details are in `rate_limit_info` (claude 2.1) or, defensively, at the top.
 */
export const fromRateLimitEvent = (event: Readonly<Record<string, unknown>>): ClaudeLimit | null => {
  const info = isRecord(event.rate_limit_info) ? event.rate_limit_info : event
  if (info.status !== "rejected") return null
  const resetAt = epochMs(info.resetsAt ?? info.resets_at)
  const kind = info.rateLimitType ?? info.rate_limit_type
  return {
    message: `claude hit a usage limit${typeof kind === "string" ? ` (${kind})` : ""}${resetsAtText(resetAt)}`,
    resetAt,
    resets: true
  }
}

const LEGACY_LIMIT = /Claude AI usage limit reached\|(\d+)/
const HIT_LIMIT = /You(?:'|’)ve hit your [^.\n·]*limit/i
const NO_CREDITS = /out of (?:usage |extra usage )?credits|credit balance is too low/i
const CLOCK = /resets (?:at )?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*\(([^)]+)\)/i

const zoneOffsetMs = (zone: string, at: number): number => {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit"
  }).formatToParts(new Date(at))
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value)
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"))
  return wall - Math.floor(at / 1000) * 1000
}

/**
 * The next time a wall clock in `zone` shows `resets 3pm (Europe/Paris)` after `now`; null when
 * the text has no such time or names a zone this runtime does not know. claude shows the reset cut
 * to the minute: a time in the current minute is this minute's (a reset seconds away), not
 * tomorrow's.
 */
export const clockResetAt = (text: string, now: number): number | null => {
  const match = CLOCK.exec(text)
  if (match === null) return null
  let hour = Number(match[1])
  const minute = Number(match[2] ?? 0)
  const meridiem = match[3]?.toLowerCase()
  if (minute > 59 || hour > 23 || (meridiem !== undefined && (hour < 1 || hour > 12))) return null
  if (meridiem === "pm" && hour !== 12) hour += 12
  if (meridiem === "am" && hour === 12) hour = 0
  try {
    const offset = zoneOffsetMs(match[4]!.trim(), now)
    const wallNow = new Date(now + offset)
    let target = Date.UTC(wallNow.getUTCFullYear(), wallNow.getUTCMonth(), wallNow.getUTCDate(), hour, minute)
    if (target + 60_000 <= now + offset) target += 24 * 60 * 60 * 1000
    return target - offset
  } catch {
    return null
  }
}

/**
 * The reset of a run that failed on a limit: its error text's (`fromText`), refined by the run's
 * rejected `rate_limit_event` (`fromEvent`) when that lies in the minute the text shows (a text's
 * clock, `resets 2:56am`, is cut to the minute; the event's reset is to the second). A text with
 * no time takes the event's; one with a time of its own otherwise keeps it.
 */
export const runReset = (fromText: number | null, fromEvent: number | null): number | null =>
  fromText === null ? fromEvent : fromEvent !== null && fromEvent >= fromText && fromEvent < fromText + 60_000 ? fromEvent : fromText

/**
 * A failed run's error text and HTTP status (`api_error_status`) read as a limit:
 * - `Claude AI usage limit reached|<epoch>`: resets then
 * - `You've hit your limit · resets 3pm (Europe/Paris)` (session, weekly, model limits): resets
 *   at that time when it can be read, otherwise at an unknown time
 * - out of credits, or a credit balance too low: does not reset by waiting
 * - HTTP 429 (rate limited) or 529 (overloaded): resets at an unknown time
 * Anything else is not a limit (null).
 */
export const fromError = (text: string, status: number | null, now: number): ClaudeLimit | null => {
  // Whole: the message is claude's own, however long.
  const firstLine = firstLineOf(text, Number.POSITIVE_INFINITY)
  const legacy = LEGACY_LIMIT.exec(text)
  if (legacy !== null) {
    const resetAt = epochMs(legacy[1])
    return { message: `claude usage limit reached${resetsAtText(resetAt)}`, resetAt, resets: true }
  }
  if (HIT_LIMIT.test(text)) return { message: firstLine, resetAt: clockResetAt(text, now), resets: true }
  if (NO_CREDITS.test(text)) return { message: firstLine, resetAt: null, resets: false }
  if (status === 429) return { message: firstLine || "claude was rate limited (HTTP 429)", resetAt: null, resets: true }
  if (status === 529) return { message: firstLine || "the model is overloaded (HTTP 529)", resetAt: null, resets: true }
  return null
}
