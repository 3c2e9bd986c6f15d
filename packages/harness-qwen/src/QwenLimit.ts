/*
 * Usage and rate limits as Qwen Code reports them on its error channels, never in the model's own
 * words:
 * - while it retries: with QWEN_CODE_UNATTENDED_RETRY=1 (the harness sets it) qwen waits out an
 *   HTTP 429 or 529 for as long as it lasts, and says so on stderr every 30 s of a wait
 *   (`[qwen-code] Waiting for API capacity... attempt 1, retry in 3570s`); a limit it does not
 *   wait out so is retried with `Retrying in 60s (attempt 1/10): [API Error: 429 ...]`
 * - when the run fails on one: a quota spent until a reset (`Quota exhausted: ...`, which qwen
 *   does not retry), the Qwen OAuth free tier, or an API error that names a limit
 */

/** A limit qwen hit: the fields of core's `Limited` event. */
export interface QwenLimit {
  readonly message: string
  /** When the limit lifts (epoch ms), when the API's message names a time. */
  readonly resetAt: number | null
  /** How long qwen waits before its next try, when it says. */
  readonly retryAfterMs: number | null
  /** False for a quota that waiting does not restore (billing, a plan's end). */
  readonly resets: boolean
}

const HEARTBEAT = /^\[qwen-code\] Waiting for API capacity\.\.\. attempt (\d+), retry in (\d+)s$/
const RETRYING = /^Retrying in (\d+)s \(attempt (\d+)\/(\d+)\)(?:: (.*))?$/
// Read only in trimmed text, so nothing (not even whitespace) follows the closing bracket.
const API_ERROR = /^\[API Error: ([\s\S]*?)\]$/
const LIMIT_WORDS = /^(?:429|529)\b|rate[- ]limit|\bquota\b|too many requests|usage limit|throttl|RESOURCE_EXHAUSTED/i
const NO_RESET = /billing|insufficient[_ ]quota|arrearage|credit balance|upgrade your plan|has been discontinued/i
const QUOTA_EXHAUSTED = /^Quota exhausted: /
const OAUTH = /^Qwen OAuth (?:quota exceeded|free tier has been discontinued)/
const RESET_AT = /\breset(?:s)? (?:at|on) ([^\n]+?)\.?$/im
/** The hint qwen adds to an API error with HTTP 429. */
const RATE_LIMIT_HINT = "Possible quota limitations in place or slow response times detected."

const firstLine = (text: string) => text.trim().split("\n", 1)[0]!.trim()

/** The API's own words in one of qwen's error reports (`[API Error: 429 Rate limit reached]` → `429 Rate limit reached`). */
export const apiWords = (text: string): string => {
  const line = firstLine(text)
  return API_ERROR.exec(line)?.[1]!.trim() ?? line
}

/** The reset time an API's message names (`will reset at 2026-11-30T00:00:00Z`), if it is one after `now`. */
export const resetTimeOf = (text: string, now: number): number | null => {
  const match = RESET_AT.exec(text)
  if (match === null) return null
  const at = Date.parse(match[1]!.trim())
  return Number.isFinite(at) && at > now ? at : null
}

/** A stderr line of qwen waiting out a limit (`[qwen-code] Waiting for API capacity... attempt 1, retry in 3570s`), or null. */
export const fromHeartbeat = (line: string): QwenLimit | null => {
  const match = HEARTBEAT.exec(line.trim())
  if (match === null) return null
  const seconds = Number(match[2])
  return {
    message: `qwen is waiting for API capacity: its model API answered with a rate or usage limit (HTTP 429 or 529); next try in ${seconds}s`,
    resetAt: null,
    retryAfterMs: seconds * 1000,
    resets: true
  }
}

/** A stderr line of qwen retrying after a rate limit (`Retrying in 60s (attempt 1/10): [API Error: 429 ...]`), or null. */
export const fromRetrying = (line: string): QwenLimit | null => {
  const match = RETRYING.exec(line.trim())
  if (match === null) return null
  const words = match[4] === undefined ? "" : apiWords(match[4])
  return {
    message: words === "" ? "qwen's model API answered with a rate limit" : words,
    resetAt: null,
    retryAfterMs: Number(match[1]) * 1000,
    resets: !NO_RESET.test(words)
  }
}

/**
 * The error a failed run ended on, read as a limit, or null:
 * - `Quota exhausted: ...` (a quota that resets at a time the API names): until that time
 * - the Qwen OAuth free tier's end (does not reset) or quota
 * - an API error with HTTP 429/529 or a limit's words (billing and credits do not reset)
 */
export const fromError = (text: string, now: number): QwenLimit | null => {
  const trimmed = text.trim()
  if (QUOTA_EXHAUSTED.test(trimmed)) {
    // The reset is read in the whole line: qwen's own prefix names none.
    const message = firstLine(trimmed)
    return { message, resetAt: resetTimeOf(message, now), retryAfterMs: null, resets: true }
  }
  if (OAUTH.test(trimmed)) return { message: firstLine(trimmed), resetAt: null, retryAfterMs: null, resets: !NO_RESET.test(trimmed) }
  const api = API_ERROR.exec(firstLine(trimmed)) ?? API_ERROR.exec(trimmed)
  if (api === null) return null
  const words = apiWords(api[0])
  if (!LIMIT_WORDS.test(words) && !trimmed.includes(RATE_LIMIT_HINT)) return null
  return { message: words, resetAt: resetTimeOf(words, now), retryAfterMs: null, resets: !NO_RESET.test(words) }
}
