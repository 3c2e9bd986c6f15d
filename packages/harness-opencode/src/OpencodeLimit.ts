import { HarnessEvent } from "@spool/core"
import type { SessionError } from "./OpencodeEvent.js"

/** Too many requests, and Anthropic's "overloaded": both lift by waiting. */
const LIMIT_STATUSES = new Set([429, 529])
/** A quota used up (OpenAI's `insufficient_quota`) does not come back by waiting. */
const NO_RESET = /insufficient_quota|exceeded your current quota|quota exceeded/i

const header = (headers: Readonly<Record<string, string>> | undefined, name: string) =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1].trim()

/**
 * The usage limit an `error` event reports, if it is one: an API error with status 429 (or 529),
 * waiting as long as its `retry-after-ms` or `retry-after` header says (seconds, or an HTTP date).
 */
export const usageLimitOf = (error: SessionError["error"]): Extract<HarnessEvent, { _tag: "Limited" }> | null => {
  const status = error.data?.statusCode ?? error.data?.status
  if (status === undefined || !LIMIT_STATUSES.has(status)) return null
  const headers = error.data?.responseHeaders
  const afterMs = Number(header(headers, "retry-after-ms") ?? Number.NaN)
  const after = header(headers, "retry-after")
  const afterSeconds = after !== undefined && /^\d+(\.\d+)?$/.test(after) ? Number(after) * 1000 : Number.NaN
  // An HTTP date names its month: a number Date.parse would take for a year ("-1") is not one.
  const afterDate = after !== undefined && Number.isNaN(afterSeconds) && /[a-z]/i.test(after) ? Date.parse(after) : Number.NaN
  const message = error.data?.message ?? error.name ?? `HTTP ${status}`
  return HarnessEvent.Limited({
    message,
    resetAt: Number.isFinite(afterDate) ? afterDate : null,
    retryAfterMs: Number.isFinite(afterMs) && afterMs >= 0 ? afterMs : Number.isFinite(afterSeconds) ? afterSeconds : null,
    resets: !NO_RESET.test(`${message}\n${error.data?.responseBody ?? ""}`)
  })
}
