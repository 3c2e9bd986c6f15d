import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { contentBlocks, decodeLine, textOf } from "../src/QwenEvent.js"

// Fixtures are the real stdout of qwen 0.24.4 (`qwen -o stream-json -m qwen-test-model`, prompt on
// stdin) against a fake OpenAI-compatible server, run in /tmp/qw/proj.
const fixtureLines = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8").trim().split("\n")

describe("QwenEvent", () => {
  it("reads a run's events: init and stream events skipped, messages, tool results and the result read", () => {
    const decoded = fixtureLines("write-yolo.stdout.jsonl").map(decodeLine)
    assert.deepStrictEqual(decoded.map((line) => (line._tag === "Event" ? line.event.type : line._tag)), [
      "Ignored",
      "Ignored",
      "assistant",
      "assistant",
      "user",
      "assistant",
      "result"
    ])
    const result = decoded.at(-1)!
    assert.strictEqual(result._tag, "Event")
    if (result._tag !== "Event" || result.event.type !== "result") return
    assert.isFalse(result.event.is_error)
    assert.deepStrictEqual(result.event.usage, { input_tokens: 200, output_tokens: 40, cache_read_input_tokens: 60 })
    assert.deepStrictEqual(result.event.permission_denials, [])
  })

  it("reads a failed result's error message and its permission denials", () => {
    const failed = decodeLine(fixtureLines("api-400.stdout.jsonl").at(-1)!)
    assert.strictEqual(failed._tag, "Event")
    if (failed._tag !== "Event" || failed.event.type !== "result") return
    assert.isTrue(failed.event.is_error)
    assert.strictEqual(failed.event.subtype, "error_during_execution")
    assert.strictEqual(failed.event.error?.message, "[API Error: 400 bad request: context too long]")
    assert.isUndefined(failed.event.result)

    const denied = decodeLine(fixtureLines("write-default.stdout.jsonl").at(-1)!)
    if (denied._tag !== "Event" || denied.event.type !== "result") return assert.fail("no result")
    assert.deepStrictEqual(denied.event.permission_denials.map((d) => d.tool_name), ["write_file"])
  })

  it("counts a missing number as 0 and a missing usage as none", () => {
    const line = decodeLine(JSON.stringify({ type: "result", usage: { input_tokens: 5 } }))
    if (line._tag !== "Event" || line.event.type !== "result") return assert.fail("no result")
    assert.deepStrictEqual(line.event.usage, { input_tokens: 5, output_tokens: 0, cache_read_input_tokens: 0 })
    assert.strictEqual(line.event.subtype, "success")
    const bare = decodeLine(JSON.stringify({ type: "result" }))
    if (bare._tag !== "Event" || bare.event.type !== "result") return assert.fail("no result")
    assert.isUndefined(bare.event.usage)
  })

  it("reads a message without parent_tool_use_id as the agent's own, and a result without is_error as no failure", () => {
    const message = decodeLine(JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text: "Done." }] } }))
    if (message._tag !== "Event" || message.event.type !== "assistant") return assert.fail("no message")
    assert.isNull(message.event.parent_tool_use_id)
    const result = decodeLine(JSON.stringify({ type: "result", subtype: "success", result: "Done." }))
    if (result._tag !== "Event" || result.event.type !== "result") return assert.fail("no result")
    assert.isFalse(result.event.is_error)
  })

  it("takes a line that is not JSON for plain text, and a JSON event of another kind for none", () => {
    assert.deepStrictEqual(decodeLine("Operation cancelled."), { _tag: "Plain", text: "Operation cancelled." })
    assert.deepStrictEqual(decodeLine(JSON.stringify({ type: "system", subtype: "retry", data: { attempt: 1 } })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(JSON.stringify({ type: "assistant" })), { _tag: "Ignored" })
  })

  it("reads the blocks of a message it knows, in order, skipping the others", () => {
    const blocks = contentBlocks([
      { type: "thinking", thinking: "hmm" },
      { type: "text", text: "Hi." },
      { type: "tool_use", id: "c1", name: "write_file", input: { file_path: "/a" } },
      { type: "tool_result", tool_use_id: "c1", content: "done" },
      { type: "text" }
    ])
    assert.deepStrictEqual(blocks, [
      { type: "text", text: "Hi." },
      { type: "tool_use", id: "c1", name: "write_file", input: { file_path: "/a" } },
      { type: "tool_result", tool_use_id: "c1", is_error: false, content: "done" }
    ])
    assert.deepStrictEqual(contentBlocks("plain"), [{ type: "text", text: "plain" }])
  })

  it("reads a tool result's text from a string or text blocks", () => {
    assert.strictEqual(textOf("out"), "out")
    assert.strictEqual(textOf([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }]), "ab")
    assert.strictEqual(textOf({ text: "no" }), "")
  })
})
