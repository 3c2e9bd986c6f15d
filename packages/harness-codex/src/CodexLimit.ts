/*
 * Usage and rate limits as codex reports them in its error channels (`turn.failed`, `error`).
 * Never applied to the agent's own messages: an agent may well write these words.
 */

/** A limit codex hit: the fields of core's `Limited` event. */
export interface CodexLimit {
  readonly message: string
  /** When the limit lifts (epoch ms), if codex says. */
  readonly resetAt: number | null
  /** How long to wait, if codex gave a duration rather than a time. */
  readonly retryAfterMs: number | null
  /** False for a quota that waiting does not restore (billing). */
  readonly resets: boolean
}

const USAGE_LIMIT = /you['’]ve hit your usage limit/i
const QUOTA_EXCEEDED = /quota exceeded\. check your plan and billing/i
const RATE_LIMITED = /last status: 429\b/
const TRY_AGAIN_AT = /try again at ([^.]+)/i
const TRY_AGAIN_IN = /try again in ((?:\d+\s*[a-z]+[\s,]*(?:and\s+)?)+)/i

const UNIT_MS: Readonly<Record<string, number>> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000
}
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

const hours24 = (hour: number, meridiem: string | undefined) => {
  if (meridiem === undefined) return hour
  const pm = meridiem.toLowerCase() === "pm"
  return (hour % 12) + (pm ? 12 : 0)
}

/**
 * `3:51 PM` (the next such local time after `now`) or `Nov 27th, 2026 7:29 AM` (local time). codex
 * shows the reset cut to the minute: a time in the current minute is this minute's (a reset seconds
 * away), not tomorrow's.
 */
export const parseResetTime = (text: string, now: number): number | null => {
  const trimmed = text.trim()
  const clock = /^(\d{1,2}):(\d{2})\s*([AP]M)?$/i.exec(trimmed)
  if (clock !== null) {
    const at = new Date(now)
    at.setHours(hours24(Number(clock[1]), clock[3]), Number(clock[2]), 0, 0)
    if (at.getTime() + 60_000 <= now) at.setDate(at.getDate() + 1)
    return at.getTime()
  }
  const dated = /^([A-Za-z]{3})[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? (\d{1,2}):(\d{2})\s*([AP]M)?$/i.exec(trimmed)
  if (dated !== null) {
    const month = MONTHS.indexOf(dated[1]!.toLowerCase())
    if (month === -1) return null
    return new Date(Number(dated[3]), month, Number(dated[2]), hours24(Number(dated[4]), dated[6]), Number(dated[5])).getTime()
  }
  return null
}

/** `5 days`, `2 hours 30 minutes`, `1 hour and 5 minutes`: milliseconds, or null when no unit is known. */
export const parseDuration = (text: string): number | null => {
  let total = 0
  let found = false
  for (const match of text.matchAll(/(\d+)\s*([a-z]+)/gi)) {
    const unit = match[2]!.toLowerCase().replace(/s$/, "")
    const ms = UNIT_MS[unit] ?? UNIT_MS[{ sec: "second", min: "minute", hr: "hour" }[unit] ?? ""]
    if (ms === undefined) continue
    total += Number(match[1]) * ms
    found = true
  }
  return found ? total : null
}

/**
 * The limit an error message of codex reports, or null:
 * - `You've hit your usage limit … try again at 3:51 PM.` (or `at Nov 27th, 2026 7:29 AM`, `in 5 days`,
 *   `later`): resets, at that time when given
 * - `Quota exceeded. Check your plan and billing details.`: does not reset by waiting
 * - `exceeded retry limit, last status: 429 Too Many Requests`: a rate limit, no time given
 */
export const parseLimit = (message: string, now: number): CodexLimit | null => {
  if (QUOTA_EXCEEDED.test(message)) return { message, resetAt: null, retryAfterMs: null, resets: false }
  if (USAGE_LIMIT.test(message)) {
    const at = TRY_AGAIN_AT.exec(message)
    if (at !== null) return { message, resetAt: parseResetTime(at[1]!, now), retryAfterMs: null, resets: true }
    const within = TRY_AGAIN_IN.exec(message)
    const duration = within === null ? null : parseDuration(within[1]!)
    return { message, resetAt: duration === null ? null : now + duration, retryAfterMs: duration, resets: true }
  }
  if (RATE_LIMITED.test(message)) return { message, resetAt: null, retryAfterMs: null, resets: true }
  return null
}
