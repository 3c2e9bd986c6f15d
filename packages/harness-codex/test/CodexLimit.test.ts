import { assert, describe, it } from "@effect/vitest"
import { parseDuration, parseLimit, parseResetTime } from "../src/CodexLimit.js"

// Local times, so the expectations hold in any time zone.
const now = new Date(2026, 10, 23, 20, 9, 34).getTime()
const HOUR = 3_600_000

const USAGE = "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again"

describe("codex usage limits", () => {
  it("a time of day later today resets today", () => {
    const limit = parseLimit(`${USAGE} at 10:09 PM.`, now)
    assert.deepStrictEqual(limit, {
      message: `${USAGE} at 10:09 PM.`,
      resetAt: new Date(2026, 10, 23, 22, 9).getTime(),
      retryAfterMs: null,
      resets: true
    })
  })

  it("a time of day already past resets tomorrow", () => {
    assert.strictEqual(parseLimit("You've hit your usage limit. Try again at 3:51 PM.", now)?.resetAt, new Date(2026, 10, 24, 15, 51).getTime())
    assert.strictEqual(parseResetTime("12:05 AM", now), new Date(2026, 10, 24, 0, 5).getTime())
    assert.strictEqual(parseResetTime("20:30", now), new Date(2026, 10, 23, 20, 30).getTime())
  })

  it("a date with an ordinal day resets then", () => {
    assert.strictEqual(parseLimit(`${USAGE} at Nov 27th, 2026 7:29 AM.`, now)?.resetAt, new Date(2026, 10, 27, 7, 29).getTime())
    assert.strictEqual(parseResetTime("Dec 1st, 2026 12:00 PM", now), new Date(2026, 11, 1, 12, 0).getTime())
  })

  it("a duration resets that long from now", () => {
    assert.deepStrictEqual(parseLimit("You've hit your usage limit. Try again in 5 days.", now), {
      message: "You've hit your usage limit. Try again in 5 days.",
      resetAt: now + 5 * 24 * HOUR,
      retryAfterMs: 5 * 24 * HOUR,
      resets: true
    })
    assert.strictEqual(parseLimit("You've hit your usage limit. Try again in 2 hours.", now)?.retryAfterMs, 2 * HOUR)
    assert.strictEqual(parseDuration("1 hour and 30 minutes"), 1.5 * HOUR)
    assert.strictEqual(parseDuration("a while"), null)
  })

  it("`try again later` resets at a time nobody said", () => {
    assert.deepStrictEqual(parseLimit(`${USAGE} later.`, now), { message: `${USAGE} later.`, resetAt: null, retryAfterMs: null, resets: true })
  })

  it("an unreadable time still counts as a usage limit", () => {
    assert.deepStrictEqual(parseLimit(`${USAGE} at teatime.`, now)?.resetAt, null)
    assert.strictEqual(parseLimit(`${USAGE} at teatime.`, now)?.resets, true)
  })

  it("an exhausted quota does not reset by waiting", () => {
    const message = "Quota exceeded. Check your plan and billing details."
    assert.deepStrictEqual(parseLimit(message, now), { message, resetAt: null, retryAfterMs: null, resets: false })
  })

  it("a rate limit codex gave up retrying is a limit with no time", () => {
    const message = "exceeded retry limit, last status: 429 Too Many Requests"
    assert.deepStrictEqual(parseLimit(message, now), { message, resetAt: null, retryAfterMs: null, resets: true })
  })

  it("other errors are no limits", () => {
    assert.isNull(parseLimit("bad request: context too long", now))
    assert.isNull(parseLimit("We’re currently experiencing high demand, which may cause temporary errors.", now))
    assert.isNull(parseLimit("exceeded retry limit, last status: 500 Internal Server Error", now))
  })
})
