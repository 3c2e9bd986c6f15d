import { assert, describe, it } from "@effect/vitest"
import { decodeLine, errorMessage } from "../src/CodexEvent.js"

// Lines as `codex exec --json` (0.169) prints them; what each decodes to is pinned whole, so a
// field read wrongly or a default lost shows.
const decoded = (value: object) => decodeLine(JSON.stringify(value))
const event = (value: object) => {
  const line = decoded(value)
  assert.strictEqual(line._tag, "Event")
  return line._tag === "Event" ? line.event : undefined
}
const completed = (item: object) => event({ type: "item.completed", item: { id: "item_0", ...item } })

describe("CodexEvent: finished items", () => {
  it("an agent message keeps its whole text", () => {
    assert.deepStrictEqual(completed({ type: "agent_message", text: "Done." }), { type: "item.completed", item: { type: "agent_message", text: "Done." } })
  })

  it("a command keeps its exit code and status; one not yet known is null, and completed", () => {
    assert.deepStrictEqual(
      completed({ type: "command_execution", command: "bash -lc ls", aggregated_output: "a\n", exit_code: 2, status: "failed" }),
      { type: "item.completed", item: { type: "command_execution", command: "bash -lc ls", exit_code: 2, status: "failed" } }
    )
    assert.deepStrictEqual(completed({ type: "command_execution", command: "ls" }), {
      type: "item.completed",
      item: { type: "command_execution", command: "ls", exit_code: null, status: "completed" }
    })
  })

  it("a patch keeps its files; its status is completed unless it says otherwise", () => {
    const changes = [{ path: "/repo/a.ts", kind: "add" }]
    assert.deepStrictEqual(completed({ type: "file_change", changes, status: "failed" }), {
      type: "item.completed",
      item: { type: "file_change", changes, status: "failed" }
    })
    assert.deepStrictEqual(completed({ type: "file_change", changes }), { type: "item.completed", item: { type: "file_change", changes, status: "completed" } })
  })

  it("an error item keeps its message", () => {
    assert.deepStrictEqual(completed({ type: "error", message: "Model metadata for `x` not found." }), {
      type: "item.completed",
      item: { type: "error", message: "Model metadata for `x` not found." }
    })
  })

  it("items spool does not show (reasoning, todo lists) and unfinished items are ignored", () => {
    assert.deepStrictEqual(decoded({ type: "item.completed", item: { id: "i", type: "reasoning", text: "hmm" } }), { _tag: "Ignored" })
    assert.deepStrictEqual(decoded({ type: "item.started", item: { id: "i", type: "agent_message", text: "x" } }), { _tag: "Ignored" })
  })
})

describe("CodexEvent: the turn", () => {
  it("a completed turn keeps its token counts, a missing one counting 0", () => {
    assert.deepStrictEqual(event({ type: "turn.completed", usage: { input_tokens: 200, cached_input_tokens: 60, output_tokens: 40, reasoning_output_tokens: 10 } }), {
      type: "turn.completed",
      usage: { input_tokens: 200, cached_input_tokens: 60, cache_write_input_tokens: 0, output_tokens: 40, reasoning_output_tokens: 10 }
    })
    assert.deepStrictEqual(event({ type: "turn.completed" }), {
      type: "turn.completed",
      usage: { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0 }
    })
  })

  it("a failed turn and a stream error keep their messages", () => {
    assert.deepStrictEqual(event({ type: "turn.failed", error: { message: "boom" } }), { type: "turn.failed", error: { message: "boom" } })
    assert.deepStrictEqual(event({ type: "error", message: "Reconnecting… 1/5" }), { type: "error", message: "Reconnecting… 1/5" })
  })

  it("other events, and events of an unexpected shape, are ignored", () => {
    assert.deepStrictEqual(decoded({ type: "thread.started", thread_id: "t" }), { _tag: "Ignored" })
    assert.deepStrictEqual(decoded({ type: "turn.failed", error: "boom" }), { _tag: "Ignored" })
  })
})

describe("CodexEvent: API error bodies", () => {
  it("reads the message of an error body; a body without one, or with a blank one, stays as it is", () => {
    assert.strictEqual(errorMessage(`{"error":{"message":"too long","type":"invalid_request_error"}}`), "too long")
    assert.strictEqual(errorMessage(`{"error":{"message":"  "}}`), `{"error":{"message":"  "}}`)
    assert.strictEqual(errorMessage(`{"error":{"message":42}}`), `{"error":{"message":42}}`)
    assert.strictEqual(errorMessage(`{"error":"nope"}`), `{"error":"nope"}`)
    assert.strictEqual(errorMessage(`[1]`), `[1]`)
  })
})
