import { describe, expect, it } from "@effect/vitest"
import { oneLine } from "../src/text/Text.js"

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
