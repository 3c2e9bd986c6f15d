import { apiErrorOf } from "./GeminiEvent.js"

/*
 * Usage and rate limits as Gemini CLI reports them on its error channels: the message of a failed
 * `result` (after gemini's own retries gave up) and its `Attempt N failed: ...` lines on stderr.
 * Never applied to the agent's own messages: an agent may well write these words.
 */

/** A limit gemini hit: the fields of core's `Limited` event. */
export interface GeminiLimit {
  readonly message: string
  readonly resetAt: number | null
  /** How long to wait, when gemini or the API says (`RetryInfo`, `Please retry in 37.5s`). */
  readonly retryAfterMs: number | null
  /** False for a quota that waiting does not restore (billing). */
  readonly resets: boolean
}

const LIMIT_TEXT = /\bquota\b|RESOURCE_EXHAUSTED|rate[- ]limit|\b429\b|usage limit/i
const RETRY_IN = /retry (?:in|after) (\d+(?:\.\d+)?)\s*(ms|s)\b/i
const BILLING = /billing|upgrade your plan|plan and billing/i

/** `Please retry in 37.5s`, `Suggested retry after 37s.`: milliseconds, or null. */
export const retryDelayOf = (text: string): number | null => {
  const match = RETRY_IN.exec(text)
  if (match === null) return null
  const amount = Number(match[1])
  return Math.round(match[2]!.toLowerCase() === "ms" ? amount : amount * 1000)
}

/**
 * The limit a failed result's message names (HTTP 429, `RESOURCE_EXHAUSTED`, a quota), or null.
 * `retryHint` is the delay gemini last printed while retrying, used when the message gives none.
 */
export const fromError = (message: string, retryHint: number | null = null): GeminiLimit | null => {
  const api = apiErrorOf(message)
  const text = api?.message ?? message
  const isLimit = api !== null
    ? api.code === 429 || api.status === "RESOURCE_EXHAUSTED" || LIMIT_TEXT.test(api.message)
    : LIMIT_TEXT.test(message)
  if (!isLimit) return null
  const retryAfterMs = api?.retryDelayMs ?? retryDelayOf(text) ?? retryHint
  return { message: text.trim(), resetAt: null, retryAfterMs, resets: retryAfterMs !== null || !BILLING.test(text) }
}

/** A stderr line of gemini retrying after a limit (`Attempt 1 failed: Quota exceeded ... Please retry in 37.5s.`), or null. */
export const retryingAfterLimit = (line: string): { readonly retryAfterMs: number | null } | null =>
  /^Attempt \d+ failed\b/.test(line) && LIMIT_TEXT.test(line) ? { retryAfterMs: retryDelayOf(line) } : null
