import { assert, describe, it } from "@effect/vitest"
import { decodeLine } from "../src/OpencodeEvent.js"
import { usageLimitOf } from "../src/OpencodeLimit.js"

/** The limit an `error` line of `opencode run --format json` reports, read as the harness reads it. */
const limitOf = (error: object) => {
  const decoded = decodeLine(JSON.stringify({ type: "error", timestamp: 1764085860000, sessionID: "ses_1", error }))
  if (decoded._tag !== "Event" || decoded.event.type !== "error") throw new Error(`not an error event: ${decoded._tag}`)
  const limit = usageLimitOf(decoded.event.error)
  if (limit === null) return null
  const { _tag, ...rest } = limit
  return rest
}

const apiError = (data: object) => ({ name: "APIError", data: { message: "Too Many Requests", isRetryable: true, ...data } })
const retryAfterOf = (headers: Record<string, string>) => limitOf(apiError({ statusCode: 429, responseHeaders: headers }))

describe("usageLimitOf", () => {
  it("takes only an API error with status 429 or 529 as a usage limit", () => {
    assert.isNotNull(limitOf(apiError({ statusCode: 429 })))
    assert.isNotNull(limitOf(apiError({ status: 529 })))
    assert.isNull(limitOf(apiError({ statusCode: 500 })))
    assert.isNull(limitOf(apiError({ statusCode: 400, message: "rate limit exceeded" })))
    assert.isNull(limitOf({ name: "UnknownError", data: { message: "Too Many Requests" } }))
  })

  it("waits as many seconds as retry-after says, whole or fractional, whatever the header's case and padding", () => {
    assert.deepStrictEqual(retryAfterOf({ "Retry-After": "30" }), { message: "Too Many Requests", resetAt: null, retryAfterMs: 30_000, resets: true })
    assert.strictEqual(retryAfterOf({ "retry-after": "12.25" })?.retryAfterMs, 12_250)
    assert.deepStrictEqual(retryAfterOf({ "RETRY-AFTER": " 2 " }), { message: "Too Many Requests", resetAt: null, retryAfterMs: 2000, resets: true })
  })

  it("prefers retry-after-ms, zero meaning at once, and falls back to retry-after when it is negative or not a number", () => {
    assert.strictEqual(retryAfterOf({ "retry-after-ms": "1500", "retry-after": "2" })?.retryAfterMs, 1500)
    assert.strictEqual(retryAfterOf({ "Retry-After-Ms": "0", "retry-after": "2" })?.retryAfterMs, 0)
    assert.strictEqual(retryAfterOf({ "retry-after-ms": "-1", "retry-after": "2" })?.retryAfterMs, 2000)
    assert.strictEqual(retryAfterOf({ "retry-after-ms": "soon", "retry-after": "2" })?.retryAfterMs, 2000)
  })

  it("reads an HTTP date in retry-after as the time the limit resets", () => {
    assert.deepStrictEqual(retryAfterOf({ "retry-after": "Wed, 25 Nov 2026 15:51:00 GMT" }), {
      message: "Too Many Requests",
      resetAt: Date.UTC(2026, 10, 25, 15, 51),
      retryAfterMs: null,
      resets: true
    })
  })

  it("ignores a retry-after that is neither plain seconds nor a date", () => {
    for (const value of ["", "2e3", "0x1e", "soon", "-1", "-5", "+7"]) {
      assert.deepStrictEqual(retryAfterOf({ "retry-after": value }), { message: "Too Many Requests", resetAt: null, retryAfterMs: null, resets: true }, value)
    }
  })

  it("names the error, or its HTTP status, when it has no message", () => {
    assert.strictEqual(limitOf({ name: "APIError", data: { statusCode: 429 } })?.message, "APIError")
    assert.strictEqual(limitOf({ data: { statusCode: 529 } })?.message, "HTTP 529")
  })

  it("takes a used-up quota, named in the message or only in the response body, as a limit that does not reset", () => {
    const quota = "You exceeded your current quota, please check your plan and billing details."
    assert.strictEqual(limitOf(apiError({ statusCode: 429, message: quota }))?.resets, false)
    const body = JSON.stringify({ error: { message: "Too Many Requests", type: "insufficient_quota", code: "insufficient_quota" } })
    assert.strictEqual(limitOf(apiError({ statusCode: 429, responseBody: body }))?.resets, false)
    assert.strictEqual(limitOf(apiError({ statusCode: 429, responseBody: "{\"error\":{\"type\":\"rate_limit_error\"}}" }))?.resets, true)
  })
})
