import { Option, Schema } from "effect"
import { apiMessageOf } from "./CopilotEvent.js"

/*
 * Usage and rate limits as Copilot CLI reports them on its error channels: a failed model request
 * (`model.call_failure`, HTTP 429 or 402, the API's error body), as soon as it fails and while
 * copilot retries it, and the run's error (`session.error`, `errorType` `rate_limit` or
 * `quota_exhausted`) once it gave up. Never applied to the agent's own messages: an agent may well
 * write these words.
 *
 * copilot prints no `retry-after` (it honours one of up to a few minutes itself, and gives up at
 * once on a longer one): its output gives only a delay or reset time in the words themselves, as
 * GitHub's own limits give them (`Your limit resets ...`, `current limit resets in ~5m`). The
 * retry-after is in copilot's log, read once copilot has stopped (`retryAfterOfLog`).
 */

/** A limit copilot hit: the fields of core's `Limited` event. */
export interface CopilotLimit {
  readonly message: string
  /** When it lifts (epoch ms), when the words say. */
  readonly resetAt: number | null
  /** How long to wait, when the words say (`Retry after 20 seconds`, `resets in ~5m`). */
  readonly retryAfterMs: number | null
  /** False for a quota that waiting does not restore (billing, credits, a spending limit), unless it says when it resets. */
  readonly resets: boolean
}

/** The run's `errorType`s of a limit. */
const LIMIT_TYPES = new Set(["rate_limit", "quota_exhausted"])
/** HTTP statuses of a limit: too many requests, and payment required (a spent quota of Copilot's). */
const LIMIT_STATUS = new Set([429, 402])
/** A quota spent, which waiting does not restore (by the API's code or its words). */
const SPENT = /insufficient[_ ]quota|quota[_ ]exceeded|quota[_ ]exhausted|billing|credit balance|upgrade your plan|run out of your|spending limit|additional usage limit|no remaining quota|premium requests? (?:allowance|quota)/i

/** Milliseconds of each word a delay's unit is written in. */
const UNIT_MS = new Map<string, number>([
  ["ms", 1], ["millisecond", 1], ["milliseconds", 1],
  ["s", 1000], ["sec", 1000], ["secs", 1000], ["second", 1000], ["seconds", 1000],
  ["m", 60_000], ["min", 60_000], ["mins", 60_000], ["minute", 60_000], ["minutes", 60_000],
  ["h", 3_600_000], ["hr", 3_600_000], ["hrs", 3_600_000], ["hour", 3_600_000], ["hours", 3_600_000],
  ["d", 86_400_000], ["day", 86_400_000], ["days", 86_400_000]
])
const DELAY = /(?:resets?|retry|try again)(?: after| in)\s+~?(\d+(?:\.\d+)?)\s*([a-z]+)\b/i
// The time's words are trimmed after, so one space is enough here however many there are.
const RESET_TIME = /resets(?: at| on)?\s([^;()]+?)(?=\.(?:\s|$)|[;()]|$)/i

/** `Retry after 20 seconds`, `try again in 5m`, `current limit resets in ~90s`: milliseconds, or null. */
export const retryDelayOf = (text: string): number | null => {
  const match = DELAY.exec(text)
  if (match === null) return null
  const unit = UNIT_MS.get(match[2]!.toLowerCase())
  return unit === undefined ? null : Math.round(Number(match[1]) * unit)
}

/** `Your limit resets 2026-11-30T10:00:00Z.`, `the limit resets at Dec 1, 2026 00:00 UTC`: epoch ms, or null (`resets in ~5m` is a delay). */
export const resetTimeOf = (text: string): number | null => {
  const words = RESET_TIME.exec(text)?.[1]!.trim()
  if (words === undefined || /^in\b/i.test(words)) return null
  const at = Date.parse(words)
  return Number.isFinite(at) ? at : null
}

const limitOf = (message: string, code: string | null): CopilotLimit => {
  const retryAfterMs = retryDelayOf(message)
  const resetAt = resetTimeOf(message)
  const spent = SPENT.test(message) || (code !== null && SPENT.test(code))
  return { message, resetAt, retryAfterMs, resets: resetAt !== null || retryAfterMs !== null || !spent }
}

/** The limit a failed model request names (HTTP 429 or 402), or null; its message is `<status> <the API's words>`, as copilot shows it. */
export const fromFailure = (statusCode: number | undefined, errorType: string | undefined, body: string): CopilotLimit | null => {
  if (statusCode === undefined || !LIMIT_STATUS.has(statusCode)) return null
  const api = apiMessageOf(body)
  return limitOf(`${statusCode} ${api.message.trim()}`.trim(), api.code ?? errorType ?? null)
}

/** The limit the run's error names (`rate_limit`, `quota_exhausted`, or HTTP 429 or 402), or null. */
export const fromSessionError = (errorType: string, statusCode: number | undefined, message: string): CopilotLimit | null =>
  LIMIT_TYPES.has(errorType) || (statusCode !== undefined && LIMIT_STATUS.has(statusCode))
    ? limitOf(message.trim(), errorType)
    : null

/** A failed request as copilot logs it: `... Model provider request failed {"http_status":429,...,"retry_after_ms":3600000}`. */
const LoggedFailure = Schema.parseJson(Schema.Struct({ http_status: Schema.Number, retry_after_ms: Schema.optional(Schema.Number) }))
const decodeLoggedFailure = Schema.decodeUnknownOption(LoggedFailure)
const FAILURE_LINE = /Model provider request failed (\{.*\})\s*$/

/** The retry-after of the last limit (HTTP 429 or 402) copilot's log names, in milliseconds, or null. */
export const retryAfterOfLog = (log: string): number | null => {
  let found: number | null = null
  for (const line of log.split("\n")) {
    // A line that is no failure has no JSON to decode (undefined), which decodes as none.
    const failure = decodeLoggedFailure(FAILURE_LINE.exec(line)?.[1])
    if (Option.isSome(failure) && LIMIT_STATUS.has(failure.value.http_status) && failure.value.retry_after_ms !== undefined) {
      found = failure.value.retry_after_ms
    }
  }
  return found
}

/** The limit that ended copilot's run, with the retry-after its log names (its words' own delay otherwise). */
export const withLoggedRetryAfter = <L extends CopilotLimit>(limit: L, log: string | null): L => {
  const retryAfterMs = log === null ? null : retryAfterOfLog(log)
  return retryAfterMs === null ? limit : { ...limit, retryAfterMs, resets: true }
}
