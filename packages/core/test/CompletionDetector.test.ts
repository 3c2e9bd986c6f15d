import { describe, expect, it } from "@effect/vitest"
import { detectCompletion, makeCompletionDetector, MAX_PROMISE_LENGTH } from "../src/CompletionDetector.js"

describe("completion promise detection", () => {
  it("detects the exact promise on its own line", () => {
    expect(detectCompletion("All done.\n<promise>COMPLETE</promise>\n", "COMPLETE")).toBe(true)
  })

  it("detects the promise at the very start of the output", () => {
    expect(detectCompletion("<promise>COMPLETE</promise>", "COMPLETE")).toBe(true)
  })

  it("ignores whitespace and newlines around the token inside the tags", () => {
    expect(detectCompletion("done\n<promise>\nCOMPLETE\n</promise>", "COMPLETE")).toBe(true)
    expect(detectCompletion("  \t<promise>  \r\n\tCOMPLETE \n </promise> trailing", "COMPLETE")).toBe(true)
  })

  it("uses the configured token", () => {
    expect(detectCompletion("<promise>COMPLETE</promise>", "SHIPPED")).toBe(false)
    expect(detectCompletion("<promise>SHIPPED</promise>", "SHIPPED")).toBe(true)
    expect(detectCompletion("<promise>a.b</promise>", "a.b")).toBe(true)
    expect(detectCompletion("<promise>axb</promise>", "a.b")).toBe(false)
  })

  it("does not accept a token that is only part of the promise text", () => {
    expect(detectCompletion("<promise>NOT COMPLETE</promise>", "COMPLETE")).toBe(false)
    expect(detectCompletion("<promise>COMPLETE YET?</promise>", "COMPLETE")).toBe(false)
  })

  it("ignores a promise quoted in the middle of a line, as an echo of the prompt's instructions would be", () => {
    const echo = "- When, and only when, the task is completely done, print the completion promise on a line of its own: <promise>COMPLETE</promise>"
    expect(detectCompletion(`${echo}\n`, "COMPLETE")).toBe(false)
    expect(detectCompletion("I will print `<promise>COMPLETE</promise>` later", "COMPLETE")).toBe(false)
  })

  it("detects a promise split across two chunks", () => {
    const detector = makeCompletionDetector("COMPLETE")
    expect(detector.feed("work done\n<prom")).toBe(false)
    expect(detector.feed("ise>COMPL")).toBe(false)
    expect(detector.feed("ETE</promise>\n")).toBe(true)
    expect(detector.detected()).toBe(true)
  })

  it("detects a promise fed one character at a time", () => {
    const detector = makeCompletionDetector("COMPLETE")
    for (const ch of "x\n<promise>\n COMPLETE\n</promise>") detector.feed(ch)
    expect(detector.detected()).toBe(true)
  })

  it("keeps the line-start rule across chunk boundaries", () => {
    const detector = makeCompletionDetector("COMPLETE")
    detector.feed("quoted: ")
    expect(detector.feed("<promise>COMPLETE</promise>")).toBe(false)
  })

  it("still detects after megabytes of output without newlines", () => {
    const detector = makeCompletionDetector("COMPLETE")
    const blob = "x".repeat(1024 * 1024)
    for (let i = 0; i < 8; i++) detector.feed(blob)
    expect(detector.feed("\n<promise>COMPLETE</promise>")).toBe(true)
    expect(detector.detected()).toBe(true)
  })

  it("does not accept a promise whose whitespace exceeds the bounded window across chunks", () => {
    const detector = makeCompletionDetector("COMPLETE")
    detector.feed("\n<promise>")
    detector.feed(" ".repeat(MAX_PROMISE_LENGTH * 2))
    expect(detector.feed("COMPLETE</promise>")).toBe(false)
  })
})
