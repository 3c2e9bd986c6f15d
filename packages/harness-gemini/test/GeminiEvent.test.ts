import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { apiErrorOf, decodeLine } from "../src/GeminiEvent.js"

// Lines of the real output of gemini 0.61.0 against a fake model server (see GeminiOutput.test.ts).
const fixtureLines = (name: string) =>
  readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8").split("\n").filter((line) => line !== "")
const line = (event: object) => JSON.stringify(event)

describe("gemini event lines", () => {
  it("decodes each event of a recorded run to the fields spool reads, and skips the init event", () => {
    const [init, prompt, text, use, result] = fixtureLines("write-default.stdout.jsonl").map(decodeLine)
    assert.deepStrictEqual(init, { _tag: "Ignored" })
    assert.deepStrictEqual(prompt, { _tag: "Event", event: { type: "message", role: "user", content: "write it\n" } })
    assert.deepStrictEqual(text, { _tag: "Event", event: { type: "message", role: "assistant", content: "Writing." } })
    assert.deepStrictEqual(use, {
      _tag: "Event",
      event: {
        type: "tool_use",
        tool_name: "write_file",
        tool_id: "write_file__write_file_1795628440102_0",
        parameters: { file_path: "/tmp/hw/proj/x/hello.txt", content: "hi\n" }
      }
    })
    const message = "Tool \"write_file\" not found. Did you mean one of: \"read_file\", \"update_topic\", \"grep_search\"?"
    assert.deepStrictEqual(result, {
      _tag: "Event",
      event: { type: "tool_result", tool_id: "write_file__write_file_1795628440102_0", status: "error", error: { type: "tool_not_registered", message } }
    })
    const end = decodeLine(fixtureLines("write-default.stdout.jsonl").at(-1)!)
    assert.deepStrictEqual(end, {
      _tag: "Event",
      event: { type: "result", status: "success", stats: { total_tokens: 270, input_tokens: 200, output_tokens: 40, cached: 60 } }
    })
  })

  it("decodes a successful tool result, and a failed result with the API's error", () => {
    const success = decodeLine(fixtureLines("write-yolo.stdout.jsonl")[4]!)
    assert.deepStrictEqual(success, { _tag: "Event", event: { type: "tool_result", tool_id: "write_file__write_file_1795628451313_0", status: "success" } })
    const failed = decodeLine(fixtureLines("api-400.stdout.jsonl").at(-1)!)
    assert.deepStrictEqual(failed, {
      _tag: "Event",
      event: {
        type: "result",
        status: "error",
        error: { type: "unknown", message: "[API Error: {\"error\":{\"code\":400,\"message\":\"fake bad request\",\"status\":\"INVALID_ARGUMENT\"}}]" },
        stats: { total_tokens: 0, input_tokens: 0, output_tokens: 0, cached: 0 }
      }
    })
  })

  it("decodes error events, a missing severity being an error", () => {
    assert.deepStrictEqual(decodeLine(line({ type: "error", severity: "warning", message: "Loop detected" })), {
      _tag: "Event",
      event: { type: "error", severity: "warning", message: "Loop detected" }
    })
    assert.deepStrictEqual(decodeLine(line({ type: "error", message: "Model stream ended with empty response" })), {
      _tag: "Event",
      event: { type: "error", severity: "error", message: "Model stream ended with empty response" }
    })
  })

  it("counts missing token counts, or missing stats, as 0, and a call without parameters as one with none", () => {
    assert.deepStrictEqual(decodeLine(line({ type: "result", status: "success", stats: { total_tokens: 5 } })), {
      _tag: "Event",
      event: { type: "result", status: "success", stats: { total_tokens: 5, input_tokens: 0, output_tokens: 0, cached: 0 } }
    })
    assert.deepStrictEqual(decodeLine(line({ type: "result", status: "success" })), {
      _tag: "Event",
      event: { type: "result", status: "success", stats: { total_tokens: 0, input_tokens: 0, output_tokens: 0, cached: 0 } }
    })
    assert.deepStrictEqual(decodeLine(line({ type: "tool_use", tool_name: "list_directory", tool_id: "t" })), {
      _tag: "Event",
      event: { type: "tool_use", tool_name: "list_directory", tool_id: "t", parameters: {} }
    })
    assert.deepStrictEqual(decodeLine(line({ type: "tool_result", tool_id: "t", status: "error", error: { message: "denied" } })), {
      _tag: "Event",
      event: { type: "tool_result", tool_id: "t", status: "error", error: { message: "denied" } }
    })
  })

  it("skips events of an unknown type or shape, and passes other lines on as plain text", () => {
    assert.deepStrictEqual(decodeLine(line({ type: "thought", content: "hmm" })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(line({ type: "message", role: "assistant" })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(line({ type: "tool_use", tool_name: "x" })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(line({ type: "tool_result", status: "success" })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(line({ type: "error" })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(line({ type: "result" })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(line({ type: "result", status: "error", error: {} })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(line({ type: "result", status: "success", stats: { cached: "60" } })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine("Loaded cached credentials."), { _tag: "Plain", text: "Loaded cached credentials." })
  })
})

describe("gemini API errors", () => {
  it("reads the code, message, status and retry delay of an API error body", () => {
    const body = {
      error: {
        code: 429,
        message: "Resource has been exhausted (e.g. check quota).",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [] }, { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37.25s" }]
      }
    }
    const expected = { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED", retryDelayMs: 37_250 }
    assert.deepStrictEqual(apiErrorOf(`[API Error: ${JSON.stringify(body)}]`), expected)
    // Unwrapped, or with blank lines around it, as well.
    assert.deepStrictEqual(apiErrorOf(JSON.stringify(body)), expected)
    assert.deepStrictEqual(apiErrorOf(`\n  [API Error: ${JSON.stringify(body)}]  \n`), expected)
  })

  it("reads a body that lacks a code, a status or a retry delay as far as it goes", () => {
    assert.deepStrictEqual(apiErrorOf("[API Error: {\"error\":{\"message\":\"m\"}}]"), { code: null, message: "m", status: null, retryDelayMs: null })
    assert.deepStrictEqual(apiErrorOf("[API Error: {\"error\":{\"code\":\"429\",\"message\":\"m\",\"status\":7}}]"), { code: null, message: "m", status: null, retryDelayMs: null })
    const details = (detail: unknown) => apiErrorOf(JSON.stringify({ error: { message: "m", details: detail } }))?.retryDelayMs
    assert.isNull(details({ retryDelay: "5s" }))
    assert.isNull(details([{ retryDelay: 5 }]))
    assert.isNull(details([{ retryDelay: "5 seconds" }]))
    assert.isNull(details([{ retryDelay: "x5s" }]))
    assert.isNull(details([{ retryDelay: "5sec" }]))
    assert.strictEqual(details([{ retryDelay: 5 }, { retryDelay: "12s" }]), 12_000)
    assert.strictEqual(details([{ retryDelay: "0.0004s" }]), 0)
  })

  it("finds no API error in text that is not a JSON body with an error message", () => {
    assert.isNull(apiErrorOf("[API Error: socket hang up]"))
    assert.isNull(apiErrorOf("[API Error: {\"error\":{\"code\":400,\"message\":\"m\"}}] and more"))
    assert.isNull(apiErrorOf("Error: [API Error: {\"error\":{\"code\":400,\"message\":\"m\"}}]"))
    assert.isNull(apiErrorOf("[API Error: null]"))
    assert.isNull(apiErrorOf("[API Error: {\"code\":400}]"))
    assert.isNull(apiErrorOf("[API Error: {\"error\":\"bad\"}]"))
    assert.isNull(apiErrorOf("[API Error: {\"error\":null}]"))
    assert.isNull(apiErrorOf("[API Error: {\"error\":{\"code\":400,\"message\":{\"text\":\"m\"}}}]"))
    assert.isNull(apiErrorOf("[API Error: {\"error\":{\"code\":400}}]"))
  })
})
