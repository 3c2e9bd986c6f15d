import { assert, describe, it } from "@effect/vitest"
import { fromFailure, fromSessionError, resetTimeOf, retryAfterOfLog, retryDelayOf } from "../src/CopilotLimit.js"

describe("copilot's limits", () => {
  it("reads how long to wait from the words, in any unit copilot or GitHub writes", () => {
    assert.strictEqual(retryDelayOf("GitHub code search is rate limited (403). Retry after 20 seconds."), 20_000)
    assert.strictEqual(retryDelayOf("You've hit your rate limit. (current limit resets in ~90s)"), 90_000)
    assert.strictEqual(retryDelayOf("(current limit resets in ~5m)"), 300_000)
    assert.strictEqual(retryDelayOf("please try again in 1.5 hours"), 5_400_000)
    assert.strictEqual(retryDelayOf("retry after 250ms"), 250)
    assert.strictEqual(retryDelayOf("Try again in 2 days"), 172_800_000)
    assert.strictEqual(retryDelayOf("Your rate limit will reset in 30 seconds."), 30_000)
    assert.strictEqual(retryDelayOf("Rate limit exceeded. Please retry after  60 seconds."), 60_000)
    assert.strictEqual(retryDelayOf("try again in 2.25 hours"), 8_100_000)
    assert.isNull(retryDelayOf("retried 5 times (total retry wait time: 5.57 seconds)"))
    assert.isNull(retryDelayOf("retry after 5 fortnights"))
    assert.isNull(retryDelayOf("Rate limit reached for requests"))
  })

  it("reads a delay in milliseconds, seconds, minutes, hours or days, written short or long, in any case", () => {
    const delays: ReadonlyArray<readonly [string, number]> = [
      ["retry after 250ms", 250], ["retry after 1 millisecond", 1], ["retry after 250 milliseconds", 250],
      ["Retry after 20s", 20_000], ["Retry after 20 sec", 20_000], ["Retry after 20 secs", 20_000], ["Retry after 1 second", 1000],
      ["Retry after 20 Seconds", 20_000],
      ["try again in 5m", 300_000], ["try again in 5 min", 300_000], ["try again in 5 mins", 300_000], ["try again in 1 minute", 60_000],
      ["try again in 5 minutes", 300_000],
      ["try again in 2h", 7_200_000], ["try again in 2 hr", 7_200_000], ["try again in 2 hrs", 7_200_000], ["try again in 1 Hour", 3_600_000],
      ["try again in 2 hours", 7_200_000],
      ["resets in 1d", 86_400_000], ["resets in 1 day", 86_400_000], ["resets in 2 days", 172_800_000]
    ]
    for (const [words, ms] of delays) assert.strictEqual(retryDelayOf(words), ms, words)
  })

  it("reads when a limit resets from the words, and nothing from words that are no time", () => {
    assert.strictEqual(resetTimeOf("You've reached your weekly rate limit. Your limit resets 2026-11-30T10:00:00Z."), Date.UTC(2026, 10, 30, 10, 0))
    assert.strictEqual(resetTimeOf("Quota spent; the limit resets at 2026-12-01T00:00:00+00:00; see your plan"), Date.UTC(2026, 11, 1))
    assert.strictEqual(resetTimeOf("Your quota resets on December 1, 2026 UTC."), Date.UTC(2026, 11, 1))
    // The time is the words up to the sentence's end, a bracket or a semicolon, or the end of the text.
    assert.strictEqual(resetTimeOf("Your limit resets 2026-11-30T10:00:00Z. Upgrade your plan for more."), Date.UTC(2026, 10, 30, 10, 0))
    assert.strictEqual(resetTimeOf("Your limit resets 2026-11-30T10:00:00Z"), Date.UTC(2026, 10, 30, 10, 0))
    assert.strictEqual(resetTimeOf("Your limit resets 2026-12-01T00:00:00Z (in about 2 days)"), Date.UTC(2026, 11, 1))
    assert.strictEqual(resetTimeOf("Your limit resets  2026-12-01T00:00:00Z."), Date.UTC(2026, 11, 1))
    // Only words that start with `in` are a delay, not a time.
    assert.strictEqual(resetTimeOf("Your premium request allowance resets again on December 1, 2026 UTC."), Date.UTC(2026, 11, 1))
    assert.isNull(resetTimeOf("Your limit resets in December 1, 2026 UTC."))
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
    // A 429 with an empty body, or a text body on lines of its own: the status, and the words on its line.
    assert.strictEqual(fromFailure(429, undefined, "")!.message, "429")
    assert.strictEqual(fromFailure(429, undefined, "\n  Too Many Requests\n")!.message, "429 Too Many Requests")
    // A spent quota that says when to try again does reset.
    const waits = fromFailure(402, undefined, `{"error":{"message":"No remaining quota for premium requests. Try again in 3 days.","code":"quota_exceeded"}}`)
    assert.deepStrictEqual(waits, { message: "402 No remaining quota for premium requests. Try again in 3 days.", resetAt: null, retryAfterMs: 259_200_000, resets: true })
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
    // By its type alone, with no status; a spent quota by its type alone, whatever its words.
    assert.isNotNull(fromSessionError("rate_limit", undefined, "Failed to get response from the AI model; retried 5 times"))
    assert.isFalse(fromSessionError("quota_exhausted", undefined, "Failed to get response from the AI model")!.resets)
    assert.isFalse(fromSessionError("query", 402, "You've used your monthly premium request allowance.")!.resets)
    assert.isNotNull(fromSessionError("query", 429, "slow down"))
    assert.isNotNull(fromSessionError("query", 402, "pay up"))
    assert.isNull(fromSessionError("query", 400, "400 bad request: rate limit of the context"))
    assert.isNull(fromSessionError("authentication", undefined, "quota"))
  })

  it("reads the retry-after of the last limit copilot's log names, and nothing from other lines", () => {
    const failed = (fields: string) =>
      `2026-11-29T10:57:12.260Z [WARNING] [rust:model_events::producer] Model provider request failed {"stage":"inference",${fields}}`
    assert.strictEqual(retryAfterOfLog(failed(`"http_status":429,"failure_kind":"http_error","retry_after_ms":3600000`)), 3_600_000)
    assert.strictEqual(retryAfterOfLog(failed(`"http_status":402,"retry_after_ms":5000`)), 5000)
    assert.strictEqual(
      retryAfterOfLog([failed(`"http_status":429,"retry_after_ms":1000`), "2026-11-29 [INFO] other", failed(`"http_status":429,"retry_after_ms":2000`)].join("\n")),
      2000
    )
    // A failure that is no limit, a limit with no retry-after, or a later one without it: the last that names one.
    assert.strictEqual(retryAfterOfLog(failed(`"http_status":429,"retry_after_ms":7000`) + "\n" + failed(`"http_status":429`)), 7000)
    assert.isNull(retryAfterOfLog(failed(`"http_status":500,"retry_after_ms":3000`)))
    assert.isNull(retryAfterOfLog(failed(`"http_status":429`)))
    assert.isNull(retryAfterOfLog(failed(`"http_status":429,"retry_after_ms":"soon"`)))
    assert.isNull(retryAfterOfLog(`${failed(`"http_status":429,"retry_after_ms":3000`)} and more`))
    assert.isNull(retryAfterOfLog(`[INFO] retry_after_ms 3000, {"http_status":429,"retry_after_ms":3000}`))
    assert.isNull(retryAfterOfLog(""))
    // Written with Windows line ends, or with spaces after it: read all the same.
    assert.strictEqual(retryAfterOfLog(`${failed(`"http_status":429,"retry_after_ms":4000`)}\r\n[INFO] next\r\n`), 4000)
    assert.strictEqual(retryAfterOfLog(`${failed(`"http_status":429,"retry_after_ms":6000`)}  `), 6000)
  })
})
