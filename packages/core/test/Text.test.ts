import { describe, expect, it } from "@effect/vitest"
import { formatDuration, oneLine } from "../src/text/Text.js"

describe("formatDuration", () => {
  it.each([
    [0, "0ms"],
    [450, "450ms"],
    [1000, "1.0s"],
    [12_345, "12.3s"],
    [59_900, "59.9s"],
    [60_000, "1m00s"],
    [192_000, "3m12s"],
    [3_599_000, "59m59s"],
    [3_600_000, "1h00m"],
    [3_720_000, "1h02m"],
    [36_000_000 + 5 * 60_000, "10h05m"]
  ])("%i ms is %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text)
  })

  it("rounds to the second past a minute, and gives no seconds past an hour", () => {
    expect(formatDuration(60_499)).toBe("1m00s")
    expect(formatDuration(60_500)).toBe("1m01s")
    expect(formatDuration(3_659_000)).toBe("1h00m")
  })
})

describe("oneLine", () => {
  it("collapses every run of whitespace, line breaks included, to one space and trims the ends", () => {
    expect(oneLine("  exit 1:\n\tline two\r\n  line   three  ")).toBe("exit 1: line two line three")
  })

  it("cuts at 200 characters by default, the last one an ellipsis", () => {
    expect(oneLine("a".repeat(200))).toBe("a".repeat(200))
    expect(oneLine("a".repeat(201))).toBe(`${"a".repeat(199)}…`)
  })

  it("cuts at `max` characters, counted after the whitespace is collapsed", () => {
    expect(oneLine("one two three", 7)).toBe("one tw…")
    expect(oneLine("one   two", 7)).toBe("one two")
    expect(oneLine("x".repeat(80), 80)).toBe("x".repeat(80))
  })
})
