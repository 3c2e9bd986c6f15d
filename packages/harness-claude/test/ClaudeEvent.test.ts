import { assert, describe, it } from "@effect/vitest"
import { ClaudeEvent } from "../src/index.js"

// Lines as claude 2.1 prints them with `-p --output-format stream-json --verbose`; what each
// decodes to is pinned whole, so a field read wrongly or a default lost shows.
const decoded = (value: object) => ClaudeEvent.decodeLine(JSON.stringify(value))
const event = (value: object) => {
  const line = decoded(value)
  assert.strictEqual(line._tag, "Event")
  return line._tag === "Event" ? line.event : undefined
}

describe("ClaudeEvent: stream-json lines", () => {
  it("an assistant message keeps its content blocks; a top-level one has no parent, and is no API error", () => {
    const content = [{ type: "thinking", thinking: "hmm", signature: "x" }, { type: "text", text: "Hi." }]
    assert.deepStrictEqual(
      event({
        type: "assistant",
        message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content, stop_reason: null, usage: { input_tokens: 3 } },
        parent_tool_use_id: null,
        session_id: "s"
      }),
      { type: "assistant", message: { content }, parent_tool_use_id: null, is_api_error_message: false }
    )
    assert.deepStrictEqual(event({ type: "assistant", message: { content: [] } }), {
      type: "assistant",
      message: { content: [] },
      parent_tool_use_id: null,
      is_api_error_message: false
    })
  })

  it("a sub-agent's message names its Task call; claude's own API error report says so", () => {
    assert.deepStrictEqual(event({ type: "assistant", message: { content: [] }, parent_tool_use_id: "toolu_1" }), {
      type: "assistant",
      message: { content: [] },
      parent_tool_use_id: "toolu_1",
      is_api_error_message: false
    })
    assert.deepStrictEqual(
      event({ type: "assistant", message: { content: [{ type: "text", text: "API Error: 500" }] }, parent_tool_use_id: null, is_api_error_message: true, error: "unknown" }),
      { type: "assistant", message: { content: [{ type: "text", text: "API Error: 500" }] }, parent_tool_use_id: null, is_api_error_message: true }
    )
  })

  it("tool results come back as a user message, its content a string or blocks", () => {
    const blocks = [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok", is_error: false }]
    assert.deepStrictEqual(event({ type: "user", message: { role: "user", content: blocks }, parent_tool_use_id: null, tool_use_result: {} }), {
      type: "user",
      message: { content: blocks },
      parent_tool_use_id: null
    })
    assert.deepStrictEqual(event({ type: "user", message: { role: "user", content: "plain" }, parent_tool_use_id: "toolu_2" }), {
      type: "user",
      message: { content: "plain" },
      parent_tool_use_id: "toolu_2"
    })
  })

  it("a denied permission and a retried request are system events of their own subtype", () => {
    assert.deepStrictEqual(
      event({ type: "system", subtype: "permission_denied", tool_name: "Bash", tool_use_id: "toolu_1", message: "no", session_id: "s" }),
      { type: "system", subtype: "permission_denied", tool_name: "Bash", tool_use_id: "toolu_1", message: "no" }
    )
    assert.deepStrictEqual(
      event({ type: "system", subtype: "api_retry", attempt: 2, max_retries: 10, retry_delay_ms: 1200, error_status: 529, error: "overloaded_error" }),
      { type: "system", subtype: "api_retry", attempt: 2, max_retries: 10, retry_delay_ms: 1200, error_status: 529, error: "overloaded_error" }
    )
    assert.deepStrictEqual(event({ type: "system", subtype: "api_retry" }), { type: "system", subtype: "api_retry" })
  })

  it("other system events (init, status) are ignored", () => {
    assert.deepStrictEqual(decoded({ type: "system", subtype: "init", cwd: "/repo", session_id: "s", tools: [], model: "m" }), { _tag: "Ignored" })
    assert.deepStrictEqual(decoded({ type: "system", subtype: "status", status: "compacting" }), { _tag: "Ignored" })
  })

  it("a rate_limit_event keeps its details, nested or at the top", () => {
    const info = { status: "rejected", resetsAt: 1768500000, rateLimitType: "five_hour" }
    assert.deepStrictEqual(event({ type: "rate_limit_event", rate_limit_info: info, uuid: "u", session_id: "s" }), {
      type: "rate_limit_event",
      rate_limit_info: info
    })
    assert.deepStrictEqual(event({ type: "rate_limit_event", status: "rejected", resets_at: 1, rate_limit_type: "seven_day" }), {
      type: "rate_limit_event",
      status: "rejected",
      resets_at: 1,
      rate_limit_type: "seven_day"
    })
  })

  it("a result keeps the run's totals, and counts missing token fields as 0", () => {
    assert.deepStrictEqual(
      event({
        type: "result",
        subtype: "error_during_execution",
        is_error: true,
        duration_ms: 10,
        result: "API Error: 400",
        errors: ["boom"],
        total_cost_usd: 0.5,
        usage: { input_tokens: 7, output_tokens: 9, output_tokens_details: { thinking_tokens: 4 }, service_tier: "standard" },
        permission_denials: [{ tool_name: "Bash", tool_use_id: "toolu_1", tool_input: { command: "ls" } }],
        api_error_status: 400
      }),
      {
        type: "result",
        subtype: "error_during_execution",
        is_error: true,
        result: "API Error: 400",
        errors: ["boom"],
        total_cost_usd: 0.5,
        usage: { input_tokens: 7, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 4 } },
        permission_denials: [{ tool_name: "Bash", tool_input: { command: "ls" } }],
        api_error_status: 400
      }
    )
    assert.deepStrictEqual(event({ type: "result", usage: { output_tokens_details: {} } }), {
      type: "result",
      subtype: "success",
      is_error: false,
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 0 } },
      permission_denials: []
    })
  })

  it("an event of an unexpected shape is ignored; a line that is no JSON event is plain", () => {
    assert.deepStrictEqual(decoded({ type: "assistant", message: {} }), { _tag: "Ignored" })
    assert.deepStrictEqual(decoded({ type: "stream_event", event: {} }), { _tag: "Ignored" })
    assert.deepStrictEqual(ClaudeEvent.decodeLine("Error: boom"), { _tag: "Plain", text: "Error: boom" })
  })
})

describe("ClaudeEvent: content blocks", () => {
  it("keeps the text, tool call and tool result blocks, in order, and skips the others", () => {
    assert.deepStrictEqual(
      ClaudeEvent.contentBlocks([
        { type: "thinking", thinking: "hmm" },
        { type: "text", text: "Writing.", citations: null },
        { type: "tool_use", id: "toolu_1", name: "Write", input: { file_path: "/repo/a" }, caller: {} },
        { type: "image", source: {} },
        { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "done" }] },
        { type: "tool_result", tool_use_id: "toolu_2", is_error: true },
        { type: "tool_use", id: "toolu_3", name: "TodoRead" }
      ]),
      [
        { type: "text", text: "Writing." },
        { type: "tool_use", id: "toolu_1", name: "Write", input: { file_path: "/repo/a" } },
        { type: "tool_result", tool_use_id: "toolu_1", is_error: false, content: [{ type: "text", text: "done" }] },
        { type: "tool_result", tool_use_id: "toolu_2", is_error: true },
        { type: "tool_use", id: "toolu_3", name: "TodoRead" }
      ]
    )
  })

  it("a message given as a string is one text block", () => {
    assert.deepStrictEqual(ClaudeEvent.contentBlocks("Resume."), [{ type: "text", text: "Resume." }])
    assert.deepStrictEqual(ClaudeEvent.contentBlocks([]), [])
  })

  it("a tool result's text is its string, or its text blocks joined", () => {
    assert.strictEqual(ClaudeEvent.textOf("exit 1"), "exit 1")
    assert.strictEqual(ClaudeEvent.textOf([{ type: "text", text: "a" }, { type: "image" }, null, { type: "text", text: "b" }]), "ab")
    assert.strictEqual(ClaudeEvent.textOf([{ type: "json", text: 42 }, { type: "text", text: "c" }]), "c")
    assert.strictEqual(ClaudeEvent.textOf({ text: "not a list" }), "")
    assert.strictEqual(ClaudeEvent.textOf(undefined), "")
  })
})
