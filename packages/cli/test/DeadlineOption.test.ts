import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { parseDeadline } from "../src/DeadlineOption.js"

const NOW = new Date(2026, 10, 27, 10, 0, 0).getTime()
const parse = (text: string) => Effect.runSync(Effect.either(parseDeadline(text, NOW)))

describe("--deadline", () => {
  it("takes a duration from now", () => {
    expect(parse("5h30m")).toEqual(Either.right(NOW + 5.5 * 3_600_000))
    expect(parse("90s")).toEqual(Either.right(NOW + 90_000))
  })

  it("takes a time of day: the next one, today or tomorrow, in local time", () => {
    expect(parse("18:00")).toEqual(Either.right(new Date(2026, 10, 27, 18, 0, 0).getTime()))
    expect(parse("09:30:15")).toEqual(Either.right(new Date(2026, 10, 28, 9, 30, 15).getTime()))
    expect(parse("10:00")).toEqual(Either.right(new Date(2026, 10, 28, 10, 0, 0).getTime()))
  })

  it("takes a date and time, with a zone or in local time", () => {
    expect(parse("2026-11-28T06:00Z")).toEqual(Either.right(Date.parse("2026-11-28T06:00:00Z")))
    expect(parse("2026-11-28T06:00")).toEqual(Either.right(new Date(2026, 10, 28, 6, 0, 0).getTime()))
  })

  it("refuses a time already past, a time that is none, and anything else, saying what it takes", () => {
    const message = (text: string) => Either.match(parse(text), { onLeft: (e) => e.message, onRight: () => "accepted" })
    expect(message("2026-11-27T09:00Z")).toMatch(/^--deadline is already past \(it is now .*\), got '2026-11-27T09:00Z': give a duration from now \(5h30m\) or a time/)
    expect(message("25:00")).toBe("--deadline must be a valid time of day, got '25:00': give a duration from now (5h30m) or a time (18:00, 2026-11-28T06:00Z)")
    expect(message("2026-13-40T06:00Z")).toMatch(/^--deadline must be a valid date and time/)
    expect(message("soon")).toBe("--deadline must be a duration or a time, got 'soon': give a duration from now (5h30m) or a time (18:00, 2026-11-28T06:00Z)")
    expect(message("5x")).toBe("--deadline must be a duration or a time, got '5x': give a duration from now (5h30m) or a time (18:00, 2026-11-28T06:00Z)")
  })
})
