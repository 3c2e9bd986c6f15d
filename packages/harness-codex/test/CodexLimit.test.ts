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

  // codex cuts the reset to the minute (codex 0.169.0 said `try again at 2:57 AM.` of a reset at 2:57:11 AM): read from
  // 2:57:00 on, that is a reset seconds away, not tomorrow's.
  it("a time of day in the current minute resets in this minute, not tomorrow", () => {
    assert.strictEqual(parseLimit(`${USAGE} at 8:09 PM.`, now)?.resetAt, new Date(2026, 10, 23, 20, 9).getTime())
    assert.strictEqual(parseResetTime("20:09", now), new Date(2026, 10, 23, 20, 9).getTime())
    assert.strictEqual(parseResetTime("20:09", new Date(2026, 10, 23, 20, 9).getTime()), new Date(2026, 10, 23, 20, 9).getTime())
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

  it("reads each unit of a duration, in words or short, singular or plural, in any case", () => {
    assert.strictEqual(parseDuration("30 seconds"), 30_000)
    assert.strictEqual(parseDuration("1 second"), 1000)
    assert.strictEqual(parseDuration("45 sec"), 45_000)
    assert.strictEqual(parseDuration("10 mins"), 600_000)
    assert.strictEqual(parseDuration("3 Minutes"), 180_000)
    assert.strictEqual(parseDuration("2 hr"), 2 * HOUR)
    assert.strictEqual(parseDuration("2 HOURS"), 2 * HOUR)
    assert.strictEqual(parseDuration("1 day"), 24 * HOUR)
    assert.strictEqual(parseDuration("2 weeks"), 14 * 24 * HOUR)
    assert.strictEqual(parseDuration("3 fortnights and 5minutes"), 5 * 60_000)
    assert.strictEqual(parseDuration("3 ms"), null)
  })

  it("a duration in several parts adds them up, and stops at the sentence's end", () => {
    const limit = parseLimit("You've hit your usage limit. Try again in 1 day, 2 hours and 3 minutes. Or buy 100 credits.", now)
    assert.strictEqual(limit?.retryAfterMs, 24 * HOUR + 2 * HOUR + 3 * 60_000)
    assert.strictEqual(limit?.resetAt, now + 24 * HOUR + 2 * HOUR + 3 * 60_000)
    assert.deepStrictEqual(parseLimit("You've hit your usage limit. Try again in a bit.", now), {
      message: "You've hit your usage limit. Try again in a bit.",
      resetAt: null,
      retryAfterMs: null,
      resets: true
    })
    assert.strictEqual(parseLimit("YOU'VE HIT YOUR USAGE LIMIT. TRY AGAIN IN 2 HOURS.", now)?.retryAfterMs, 2 * HOUR)
    assert.strictEqual(parseLimit("You've hit your usage limit. Try again in 45minutes.", now)?.retryAfterMs, 45 * 60_000)
    assert.strictEqual(parseLimit("You've hit your usage limit. Try again in 1 hour and  5 minutes.", now)?.retryAfterMs, HOUR + 5 * 60_000)
  })

  it("reads 12 AM and 12 PM, lower case, and times without a space before the meridiem", () => {
    assert.strictEqual(parseResetTime("12:00 pm", now), new Date(2026, 10, 24, 12, 0).getTime())
    assert.strictEqual(parseResetTime(" 9:15pm ", now), new Date(2026, 10, 23, 21, 15).getTime())
    assert.strictEqual(parseResetTime("20:10", now), new Date(2026, 10, 23, 20, 10).getTime())
    assert.strictEqual(parseResetTime("20:08", now), new Date(2026, 10, 24, 20, 8).getTime())
    const onTheMinute = new Date(2026, 10, 23, 20, 9).getTime()
    assert.strictEqual(parseResetTime("20:08", onTheMinute), new Date(2026, 10, 24, 20, 8).getTime())
    assert.strictEqual(parseResetTime("at 20:10", now), null)
    assert.strictEqual(parseResetTime("20:10 tonight", now), null)
    assert.strictEqual(parseResetTime("120:10", now), null)
  })

  it("reads dates with the month in full or short, with or without a dot, ordinal or commas", () => {
    assert.strictEqual(parseResetTime("November 27, 2026 7:29 AM", now), new Date(2026, 10, 27, 7, 29).getTime())
    assert.strictEqual(parseResetTime("sep. 2nd 2027, 19:05", now), new Date(2027, 8, 2, 19, 5).getTime())
    assert.strictEqual(parseResetTime("Jan 3rd, 2027 12:30 am", now), new Date(2027, 0, 3, 0, 30).getTime())
    const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    months.forEach((month, index) => assert.strictEqual(parseResetTime(`${month} 5, 2027 8:00`, now), new Date(2027, index, 5, 8, 0).getTime(), month))
    assert.strictEqual(parseResetTime("Foo 3, 2027 7:29 AM", now), null)
    assert.strictEqual(parseResetTime("on Nov 27, 2026 7:29 AM", now), null)
    assert.strictEqual(parseResetTime("Nov 27, 2026 7:29 AM UTC", now), null)
  })

  it("knows the usage limit with a straight or curly apostrophe, in any case; the quota in any case", () => {
    assert.strictEqual(parseLimit("You’ve hit your usage limit.", now)?.resets, true)
    assert.strictEqual(parseLimit("you've HIT your usage limit.", now)?.resets, true)
    assert.isNull(parseLimit("You have hit your usage limit.", now))
    assert.strictEqual(parseLimit("quota EXCEEDED. check your plan and billing details.", now)?.resets, false)
    assert.isNull(parseLimit("Quota exceeded", now))
  })

  it("a quota exceeded wins over the usage limit's wording; a rate limit needs status 429 itself", () => {
    assert.strictEqual(parseLimit("You've hit your usage limit. Quota exceeded. Check your plan and billing details.", now)?.resets, false)
    assert.isNull(parseLimit("exceeded retry limit, last status: 4290", now))
    assert.isNull(parseLimit("exceeded retry limit, Last Status: 429", now))
    assert.isNull(parseLimit("HTTP 429", now))
  })

  it("a reset time runs up to the sentence's end", () => {
    assert.strictEqual(parseLimit("You've hit your usage limit. Try again at 10:09 PM. Or upgrade.", now)?.resetAt, new Date(2026, 10, 23, 22, 9).getTime())
    assert.strictEqual(parseLimit("You've hit your usage limit. TRY AGAIN AT 10:09 PM", now)?.resetAt, new Date(2026, 10, 23, 22, 9).getTime())
  })
})
