import { assert, describe, it } from "@effect/vitest"
import { ClaudeLimit } from "../src/index.js"

describe("ClaudeLimit", () => {
  it("reads epoch times in seconds or milliseconds, as numbers or digit strings, as milliseconds", () => {
    assert.strictEqual(ClaudeLimit.epochMs(1768500000), 1768500000000)
    assert.strictEqual(ClaudeLimit.epochMs(1768500000123), 1768500000123)
    assert.strictEqual(ClaudeLimit.epochMs("1768500000"), 1768500000000)
    assert.strictEqual(ClaudeLimit.epochMs("soon"), null)
    assert.strictEqual(ClaudeLimit.epochMs(undefined), null)
    assert.strictEqual(ClaudeLimit.epochMs(0), null)
  })

  it("finds the next wall-clock reset time in the named zone, today or tomorrow", () => {
    const winterMorning = Date.UTC(2026, 0, 15, 10, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3pm (Europe/Paris)", winterMorning), Date.UTC(2026, 0, 15, 14, 0))
    const winterEvening = Date.UTC(2026, 0, 15, 15, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3pm (Europe/Paris)", winterEvening), Date.UTC(2026, 0, 16, 14, 0))
    const summer = Date.UTC(2026, 6, 1, 12, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3:30pm (America/New_York)", summer), Date.UTC(2026, 6, 1, 19, 30))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 12am (UTC)", summer), Date.UTC(2026, 6, 2, 0, 0))
  })

  // claude cuts the reset to the minute (claude 2.1.330 said `resets 2:56am (UTC)` of a reset at 2:56:08): read from 2:56:00
  // on, that is a reset seconds away, not tomorrow's.
  it("takes a reset clock in the current minute for this minute's, not tomorrow's", () => {
    const now = Date.UTC(2026, 0, 15, 2, 56, 30)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 2:56am (UTC)", now), Date.UTC(2026, 0, 15, 2, 56))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 2:56am (UTC)", Date.UTC(2026, 0, 15, 2, 56)), Date.UTC(2026, 0, 15, 2, 56))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 2:55am (UTC)", Date.UTC(2026, 0, 15, 2, 56)), Date.UTC(2026, 0, 16, 2, 55))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 10am (UTC)", Date.UTC(2026, 0, 15, 10, 0, 59)), Date.UTC(2026, 0, 15, 10, 0))
  })

  it("refines a text's reset cut to the minute by the rate_limit_event's in that minute, and keeps any other time the text gave", () => {
    const minute = Date.UTC(2026, 0, 15, 2, 56)
    assert.strictEqual(ClaudeLimit.runReset(minute, minute + 8_000), minute + 8_000)
    assert.strictEqual(ClaudeLimit.runReset(minute, minute), minute)
    assert.strictEqual(ClaudeLimit.runReset(minute, minute + 60_000), minute)
    assert.strictEqual(ClaudeLimit.runReset(minute, minute - 1), minute)
    assert.strictEqual(ClaudeLimit.runReset(minute, null), minute)
    assert.strictEqual(ClaudeLimit.runReset(null, minute + 8_000), minute + 8_000)
    assert.strictEqual(ClaudeLimit.runReset(null, null), null)
  })

  it("gives no reset time for an unknown zone, an impossible time, or none at all", () => {
    const now = Date.UTC(2026, 0, 15, 10, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3pm (Mars/Olympus)", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 13pm (UTC)", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("You've hit your limit", now), null)
  })

  it("reads no epoch time from negative, infinite or malformed values; rounds fractions; 1e11 and up is milliseconds", () => {
    assert.strictEqual(ClaudeLimit.epochMs(-5), null)
    assert.strictEqual(ClaudeLimit.epochMs(Number.POSITIVE_INFINITY), null)
    assert.strictEqual(ClaudeLimit.epochMs("-1768500000"), null)
    assert.strictEqual(ClaudeLimit.epochMs("1768500000x"), null)
    assert.strictEqual(ClaudeLimit.epochMs("x1768500000"), null)
    assert.strictEqual(ClaudeLimit.epochMs("1768500000."), null)
    assert.strictEqual(ClaudeLimit.epochMs("1768500000e3"), null)
    assert.strictEqual(ClaudeLimit.epochMs("+1768500000"), null)
    assert.strictEqual(ClaudeLimit.epochMs(" 1768500000.25 "), 1768500000250)
    assert.strictEqual(ClaudeLimit.epochMs("1768500000123.6"), 1768500000124)
    assert.strictEqual(ClaudeLimit.epochMs(99_999_999_999), 99_999_999_999_000)
    assert.strictEqual(ClaudeLimit.epochMs(100_000_000_000), 100_000_000_000)
    assert.strictEqual(ClaudeLimit.epochMs(null), null)
  })

  it("a rejected rate_limit_event reads its details nested or at the top, in either spelling", () => {
    assert.deepStrictEqual(ClaudeLimit.fromRateLimitEvent({ rate_limit_info: { status: "rejected", resets_at: "1768500000", rate_limit_type: "seven_day" } }), {
      message: "claude hit a usage limit (seven_day); it resets at 2026-01-15T18:00:00.000Z",
      resetAt: 1768500000000,
      resets: true
    })
    assert.deepStrictEqual(ClaudeLimit.fromRateLimitEvent({ status: "rejected", rateLimitType: 5 }), { message: "claude hit a usage limit", resetAt: null, resets: true })
    assert.isNull(ClaudeLimit.fromRateLimitEvent({ status: "rejected", rate_limit_info: { status: "allowed" } }))
    assert.strictEqual(ClaudeLimit.fromRateLimitEvent({ status: "rejected", rate_limit_info: [{ status: "allowed" }] })?.resets, true)
    assert.strictEqual(ClaudeLimit.fromRateLimitEvent({ status: "rejected", rate_limit_info: null })?.resets, true)
    assert.isNull(ClaudeLimit.fromRateLimitEvent({ status: "Rejected" }))
  })

  it("reads the legacy limit, the hit limit, the credits and the HTTP status of a failed run", () => {
    const now = Date.UTC(2026, 0, 15, 10, 0)
    assert.deepStrictEqual(ClaudeLimit.fromError("Claude AI usage limit reached|1768500000", null, now), {
      message: "claude usage limit reached; it resets at 2026-01-15T18:00:00.000Z",
      resetAt: 1768500000000,
      resets: true
    })
    assert.deepStrictEqual(ClaudeLimit.fromError("Claude AI usage limit reached|0", 429, now), { message: "claude usage limit reached", resetAt: null, resets: true })
    assert.deepStrictEqual(ClaudeLimit.fromError("  You’ve hit your session limit · resets 11pm (UTC)\nmore", null, now), {
      message: "You’ve hit your session limit · resets 11pm (UTC)",
      resetAt: Date.UTC(2026, 0, 15, 23, 0),
      resets: true
    })
    assert.deepStrictEqual(ClaudeLimit.fromError("you've hit your Opus LIMIT", 400, now), { message: "you've hit your Opus LIMIT", resetAt: null, resets: true })
    assert.isNull(ClaudeLimit.fromError("You've hit your stride. No limit", null, now))
    assert.isNull(ClaudeLimit.fromError("You've hit your head\nlimit", null, now))
    assert.isNull(ClaudeLimit.fromError("You've hit your · limit", null, now))
    assert.isNull(ClaudeLimit.fromError("You have hit your limit", null, now))
    for (const text of ["You're out of credits", "You're out of usage credits", "Out of Extra Usage credits", "Credit balance is too low"]) {
      assert.deepStrictEqual(ClaudeLimit.fromError(`${text}\r\nsecond line`, 400, now), { message: text, resetAt: null, resets: false }, text)
    }
    assert.isNull(ClaudeLimit.fromError("out of other credits", 400, now))
    assert.deepStrictEqual(ClaudeLimit.fromError("", 429, now), { message: "claude was rate limited (HTTP 429)", resetAt: null, resets: true })
    assert.deepStrictEqual(ClaudeLimit.fromError(" \n", 529, now), { message: "the model is overloaded (HTTP 529)", resetAt: null, resets: true })
    assert.deepStrictEqual(ClaudeLimit.fromError("API Error: 429 slow down\nretry", 429, now), { message: "API Error: 429 slow down", resetAt: null, resets: true })
    assert.deepStrictEqual(ClaudeLimit.fromError("API Error: 529 Overloaded", 529, now), { message: "API Error: 529 Overloaded", resetAt: null, resets: true })
    assert.isNull(ClaudeLimit.fromError("API Error: 429", 500, now))
    assert.isNull(ClaudeLimit.fromError("Claude AI usage limit reached|", null, now))
  })

  it("reads reset clocks with minutes, am, `at`, any case and spacing, and refuses impossible ones", () => {
    const now = Date.UTC(2026, 0, 15, 10, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets at 11:45 (UTC)", now), Date.UTC(2026, 0, 15, 11, 45))
    assert.strictEqual(ClaudeLimit.clockResetAt("Resets 9AM (UTC)", now), Date.UTC(2026, 0, 16, 9, 0))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 12pm( UTC )", now), Date.UTC(2026, 0, 15, 12, 0))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 9:59am (UTC)", now), Date.UTC(2026, 0, 16, 9, 59))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 23:59 (UTC)", now), Date.UTC(2026, 0, 15, 23, 59))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 0 (UTC)", now), Date.UTC(2026, 0, 16, 0, 0))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 11:60 (UTC)", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 24:00 (UTC)", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 0am (UTC)", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 1am (UTC)", now), Date.UTC(2026, 0, 16, 1, 0))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3pm UTC", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 123pm (UTC)", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3pm ()", now), null)
  })

  it("reads a zone's offset to the second, across a change of day", () => {
    const lateUtc = Date.UTC(2026, 0, 15, 23, 30, 45)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 9am (Asia/Tokyo)", lateUtc), Date.UTC(2026, 0, 16, 0, 0))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 5:30am (Asia/Kolkata)", Date.UTC(2026, 0, 15, 23, 59, 59, 500)), Date.UTC(2026, 0, 16, 0, 0))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 6pm (America/Los_Angeles)", lateUtc), Date.UTC(2026, 0, 16, 2, 0))
  })
})
