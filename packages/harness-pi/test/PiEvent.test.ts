import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { type DecodedLine, decodeLine, type PiEvent, textOf } from "../src/PiEvent.js"

// Lines of the real output of pi 0.73.1 against a fake OpenAI-compatible server (see PiOutput.test.ts).
const fixtureLines = (name: string) =>
  readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8").split("\n").filter((line) => line !== "")
const line = (event: object) => JSON.stringify(event)
const event = (decoded: PiEvent): DecodedLine => ({ _tag: "Event", event: decoded })
const ignored: DecodedLine = { _tag: "Ignored" }

describe("pi event lines", () => {
  it("decodes the finished messages, tool calls and end of a recorded run, and skips the rest", () => {
    const decoded = fixtureLines("write.stdout.jsonl").map(decodeLine)
    const events = decoded.flatMap((line) => (line._tag === "Event" ? [line.event] : []))
    assert.isTrue(decoded.every((line) => line._tag !== "Plain"))
    assert.deepStrictEqual(events.map((event) => event.type), [
      "message_end",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_end",
      "message_end",
      "agent_end"
    ])
    const usage = { input: 70, output: 20, cacheRead: 30, cacheWrite: 0, cost: { total: 0.000519 } }
    assert.deepStrictEqual(events[0], { type: "message_end", message: { role: "user", content: [{ type: "text", text: "write it" }] } })
    assert.deepStrictEqual(events[1], {
      type: "message_end",
      message: { role: "assistant", content: [{ type: "text", text: "Writing." }, { type: "toolCall" }], stopReason: "toolUse", usage }
    })
    assert.deepStrictEqual(events[2], { type: "tool_execution_start", toolCallId: "call_1", toolName: "write", args: { path: "x/hello.txt", content: "hi\n" } })
    assert.deepStrictEqual(events[3], {
      type: "tool_execution_end",
      toolCallId: "call_1",
      toolName: "write",
      isError: false,
      result: { content: [{ type: "text", text: "Successfully wrote 3 bytes to x/hello.txt" }] }
    })
    assert.deepStrictEqual(events[5], {
      type: "message_end",
      message: { role: "assistant", content: [{ type: "text", text: "Hello there.\n<promise>COMPLETE</promise>" }], stopReason: "stop", usage }
    })
    assert.deepStrictEqual(events[6], { type: "agent_end" })
  })

  it("decodes a failed request and pi's retries of it", () => {
    const decoded = fixtureLines("limit-429.stdout.jsonl").map(decodeLine)
    const message = "429 Rate limit reached, retry after 20s"
    assert.deepStrictEqual(decoded[6], event({
      type: "message_end",
      message: { role: "assistant", content: [], stopReason: "error", errorMessage: message, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: { total: 0 } } }
    }))
    assert.deepStrictEqual(decoded[9], event({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: message }))
    assert.deepStrictEqual(decoded.at(-1), event({ type: "auto_retry_end", success: false, finalError: message }))
    assert.deepStrictEqual(decodeLine(line({ type: "auto_retry_end", success: true, attempt: 1 })), event({ type: "auto_retry_end", success: true }))
  })

  it("counts missing numbers as 0 and fills in what pi may leave out", () => {
    assert.deepStrictEqual(decodeLine(line({ type: "message_end", message: { role: "assistant", usage: { input: 5 } } })), event({
      type: "message_end",
      message: { role: "assistant", content: [], usage: { input: 5, output: 0, cacheRead: 0, cacheWrite: 0, cost: { total: 0 } } }
    }))
    assert.deepStrictEqual(decodeLine(line({ type: "message_end", message: { role: "assistant", content: "Hi", usage: { cost: {} } } })), event({
      type: "message_end",
      message: { role: "assistant", content: "Hi", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: { total: 0 } } }
    }))
    assert.deepStrictEqual(decodeLine(line({ type: "tool_execution_start", toolCallId: "t", toolName: "ls" })), event({ type: "tool_execution_start", toolCallId: "t", toolName: "ls", args: {} }))
    assert.deepStrictEqual(decodeLine(line({ type: "tool_execution_end", toolCallId: "t", toolName: "ls" })), event({ type: "tool_execution_end", toolCallId: "t", toolName: "ls", isError: false }))
    assert.deepStrictEqual(
      decodeLine(line({ type: "tool_execution_end", toolCallId: "t", toolName: "ls", isError: true, result: { content: "no such dir" } })),
      event({ type: "tool_execution_end", toolCallId: "t", toolName: "ls", isError: true, result: { content: "no such dir" } })
    )
    assert.deepStrictEqual(decodeLine(line({ type: "tool_execution_end", toolCallId: "t", toolName: "ls", result: {} })), event({ type: "tool_execution_end", toolCallId: "t", toolName: "ls", isError: false, result: {} }))
    assert.deepStrictEqual(decodeLine(line({ type: "auto_retry_start" })), event({ type: "auto_retry_start", attempt: 0, maxAttempts: 0, delayMs: 0, errorMessage: "" }))
  })

  it("skips events of an unknown type or shape", () => {
    for (const skipped of [
      { type: "turn_end" },
      { type: "message_end" },
      { type: "message_end", message: { content: [] } },
      { type: "message_end", message: { role: "assistant", content: [{ text: "no type" }] } },
      { type: "message_end", message: { role: "assistant", usage: { input: "5" } } },
      { type: "tool_execution_start", toolName: "ls" },
      { type: "tool_execution_start", toolCallId: "t" },
      { type: "tool_execution_end", toolCallId: "t" },
      { type: "tool_execution_end", toolName: "ls" },
      { type: "tool_execution_end", toolCallId: "t", toolName: "ls", isError: "yes" },
      { type: "tool_execution_end", toolCallId: "t", toolName: "ls", result: { content: 3 } },
      { type: "auto_retry_start", attempt: "1" },
      { type: "auto_retry_start", errorMessage: 5 },
      { type: "auto_retry_end" },
      { type: "auto_retry_end", success: false, finalError: 5 }
    ]) {
      assert.deepStrictEqual(decodeLine(line(skipped)), ignored, JSON.stringify(skipped))
    }
  })

  it("skips streamed updates by their first bytes, even cut short, and reads other lines", () => {
    assert.deepStrictEqual(decodeLine(`{"type":"message_update","assistantMessageEvent":{"type":"text_delta"`), ignored)
    assert.deepStrictEqual(decodeLine(`  { "type" : "tool_execution_update", "partialResult":`), ignored)
    assert.deepStrictEqual(decodeLine(`{"type":"message_end"`), { _tag: "Plain", text: `{"type":"message_end"` })
    assert.deepStrictEqual(decodeLine(`note: {"type":"message_update"`), { _tag: "Plain", text: `note: {"type":"message_update"` })
    assert.deepStrictEqual(decodeLine("Warning: no models configured"), { _tag: "Plain", text: "Warning: no models configured" })
  })

  it("takes the text of text blocks only, never thinking or tool calls", () => {
    assert.strictEqual(textOf("plain"), "plain")
    assert.strictEqual(textOf([{ type: "thinking" }, { type: "text", text: "a" }, { type: "toolCall" }, { type: "text" }, { type: "text", text: "b" }]), "ab")
    assert.strictEqual(textOf([{ type: "thinking", text: "hidden" }]), "")
    assert.strictEqual(textOf([]), "")
  })
})
