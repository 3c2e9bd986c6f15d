import { assert, describe, it } from "@effect/vitest"
import { fromFailure, fromSessionError, resetTimeOf, retryDelayOf } from "../src/CopilotLimit.js"

describe("copilot's limits", () => {
  it("reads how long to wait from the words, in any unit copilot or GitHub writes", () => {
    assert.strictEqual(retryDelayOf("GitHub code search is rate limited (403). Retry after 20 seconds."), 20_000)
    assert.strictEqual(retryDelayOf("You've hit your rate limit. (current limit resets in ~90s)"), 90_000)
    assert.strictEqual(retryDelayOf("(current limit resets in ~5m)"), 300_000)
    assert.strictEqual(retryDelayOf("please try again in 1.5 hours"), 5_400_000)
    assert.strictEqual(retryDelayOf("retry after 250ms"), 250)
    assert.strictEqual(retryDelayOf("Try again in 2 days"), 172_800_000)
    assert.isNull(retryDelayOf("retried 5 times (total retry wait time: 5.57 seconds)"))
    assert.isNull(retryDelayOf("retry after 5 fortnights"))
    assert.isNull(retryDelayOf("Rate limit reached for requests"))
  })

  it("reads when a limit resets from the words, and nothing from words that are no time", () => {
    assert.strictEqual(resetTimeOf("You've reached your weekly rate limit. Your limit resets 2026-11-30T10:00:00Z."), Date.UTC(2026, 10, 30, 10, 0))
    assert.strictEqual(resetTimeOf("Quota spent; the limit resets at 2026-12-01T00:00:00+00:00; see your plan"), Date.UTC(2026, 11, 1))
    assert.strictEqual(resetTimeOf("Your quota resets on December 1, 2026 UTC."), Date.UTC(2026, 11, 1))
    assert.isNull(resetTimeOf("Your limit resets soon."))
    assert.isNull(resetTimeOf("(current limit resets in ~5m)"))
    assert.isNull(resetTimeOf("429 Rate limit reached for requests"))
  })

  it("takes a failed request of HTTP 429 or 402 for a limit, in the API's own words, and no other", () => {
    assert.deepStrictEqual(fromFailure(429, "rate_limit_error", `{"message":"Rate limit reached for requests","type":"rate_limit_error"}`), {
      message: "429 Rate limit reached for requests",
      resetAt: null,
      retryAfterMs: null,
      resets: true
    })
    assert.deepStrictEqual(fromFailure(429, undefined, "Too Many Requests"), { message: "429 Too Many Requests", resetAt: null, retryAfterMs: null, resets: true })
    assert.isFalse(fromFailure(429, "insufficient_quota", `{"message":"You exceeded your current quota","type":"insufficient_quota"}`)!.resets)
    // A spent quota by its code alone, whatever its words.
    assert.isFalse(fromFailure(402, undefined, `{"error":{"message":"Payment required","code":"quota_exceeded"}}`)!.resets)
    assert.isFalse(fromFailure(429, "insufficient_quota", "Payment required")!.resets)
    assert.isNull(fromFailure(400, "invalid_request_error", `{"message":"rate limit"}`))
    assert.isNull(fromFailure(503, undefined, "quota"))
    assert.isNull(fromFailure(undefined, "rate_limit_error", "quota"))
  })

  it("takes the run's error for a limit by its type or status, and a spent quota that says when it resets for one that resets", () => {
    assert.deepStrictEqual(fromSessionError("rate_limit", 429, " 429 Rate limit reached for requests "), {
      message: "429 Rate limit reached for requests",
      resetAt: null,
      retryAfterMs: null,
      resets: true
    })
    assert.isFalse(fromSessionError("quota_exhausted", undefined, "You've reached your additional usage limit for your plan.")!.resets)
    assert.isTrue(fromSessionError("quota_exhausted", undefined, "You've run out of your AI credits. Your quota resets 2026-12-01T00:00:00Z.")!.resets)
    assert.isNotNull(fromSessionError("query", 429, "slow down"))
    assert.isNotNull(fromSessionError("query", 402, "pay up"))
    assert.isNull(fromSessionError("query", 400, "400 bad request: rate limit of the context"))
    assert.isNull(fromSessionError("authentication", undefined, "quota"))
  })
})
