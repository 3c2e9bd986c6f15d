/*
 * Usage and rate limits as pi reports them: the `errorMessage` of a failed model request (the
 * provider's status and words, `429 Rate limit reached ...`), once pi's own retries gave up.
 * Never applied to the agent's own messages: an agent may well write these words.
 */

/** A limit pi hit: the fields of core's `Limited` event. */
export interface PiLimit {
  readonly message: string
  readonly resetAt: number | null
  /** How long to wait, when the provider says (`retry after 20s`, `try again in 1m30s`). */
  readonly retryAfterMs: number | null
  /** False for a quota that waiting does not restore (billing, credits). */
  readonly resets: boolean
}

const LIMIT = /^(?:429|529)\b|rate[- ]limit|\bquota\b|usage limit|RESOURCE_EXHAUSTED|too many requests/i
const NO_RESET = /billing|credit balance|insufficient[_ ]quota|upgrade your plan/i
const RETRY = /(?:retry|try again)(?: after| in)\s+((?:\d+(?:\.\d+)?\s*(?:ms|h|m|s)\s*)+)/i
const PART = /(\d+(?:\.\d+)?)\s*(ms|h|m|s)/gi
const UNIT: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** `retry after 20s`, `try again in 1m30s`: milliseconds, or null. */
export const retryDelayOf = (text: string): number | null => {
  const match = RETRY.exec(text)
  if (match === null) return null
  let total = 0
  for (const part of match[1]!.matchAll(PART)) total += Number(part[1]) * UNIT[part[2]!.toLowerCase()]!
  return Math.round(total)
}

/** The limit a failed request's message names (HTTP 429/529, a rate limit, a quota), or null. */
export const fromError = (message: string): PiLimit | null => {
  if (!LIMIT.test(message.trim())) return null
  const retryAfterMs = retryDelayOf(message)
  return { message: message.trim(), resetAt: null, retryAfterMs, resets: retryAfterMs !== null || !NO_RESET.test(message) }
}
