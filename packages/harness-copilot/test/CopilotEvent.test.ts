import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { apiMessageOf, type CopilotEvent, type DecodedLine, decodeLine, decodeUsageFile, isSubAgent } from "../src/CopilotEvent.js"

// Lines of the real output of Copilot CLI 1.0.102 against a fake OpenAI-compatible server (see CopilotOutput.test.ts).
const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8")
const fixtureLines = (name: string) => fixture(name).split("\n").filter((line) => line !== "")
const line = (event: object) => JSON.stringify(event)
const event = (decoded: CopilotEvent): DecodedLine => ({ _tag: "Event", event: decoded })
const events = (name: string) => fixtureLines(name).map(decodeLine).flatMap((line) => (line._tag === "Event" ? [line.event] : []))

describe("copilot event lines", () => {
  it("decodes the messages, tool calls and result of a recorded run, and skips the rest", () => {
    const decoded = fixtureLines("write-allow-all.stdout.jsonl").map(decodeLine)
    assert.isTrue(decoded.every((line) => line._tag !== "Plain"))
    const read = events("write-allow-all.stdout.jsonl")
    assert.deepStrictEqual(read.map((event) => event.type), [
      "assistant.message",
      "tool.execution_start",
      "tool.execution_complete",
      "assistant.message",
      "result"
    ])
    const path = "/tmp/spool-copilot/work/greeting.txt"
    assert.deepStrictEqual(read[0], { type: "assistant.message", data: { content: "Writing greeting.txt." } })
    assert.deepStrictEqual(read[1], {
      type: "tool.execution_start",
      data: { toolCallId: "call_create_1", toolName: "create", arguments: { path, file_text: "hello from copilot\n" } }
    })
    assert.deepStrictEqual(read[2], { type: "tool.execution_complete", data: { toolCallId: "call_create_1", success: true } })
    assert.deepStrictEqual(read[3], { type: "assistant.message", data: { content: "The file is written.\n\n<promise>COMPLETE</promise>" } })
    assert.deepStrictEqual(read[4], { type: "result", exitCode: 0 })
  })

  it("decodes a denied call, a failed request, copilot's retries and the run's error", () => {
    const denied = events("write-default.stdout.jsonl").find((event) => event.type === "tool.execution_complete")
    assert.deepStrictEqual(denied, {
      type: "tool.execution_complete",
      data: {
        toolCallId: "call_create_1",
        success: false,
        error: {
          message: "Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.",
          code: "denied"
        }
      }
    })
    const retried = events("limit-retry.stdout.jsonl")
    assert.deepStrictEqual(retried[0], {
      type: "model.call_failure",
      data: { statusCode: 429, errorType: "rate_limit_error", errorMessage: `{"message":"Rate limit reached for requests","type":"rate_limit_error"}`, retryAttempt: 0 }
    })
    assert.deepStrictEqual(retried[1], { type: "assistant.turn_retry", data: { reason: "rate_limit" } })
    assert.deepStrictEqual(retried.at(-2), {
      type: "session.error",
      data: {
        errorType: "rate_limit",
        message: "Failed to get response from the AI model; retried 5 times (total retry wait time: 5.57 seconds) Last error: 429 Rate limit reached for requests",
        statusCode: 429
      }
    })
    assert.deepStrictEqual(retried.at(-1), { type: "result", exitCode: 1 })
    const shell = events("bash-fail.stdout.jsonl").find((event) => event.type === "tool.execution_complete")
    assert.deepStrictEqual(shell, { type: "tool.execution_complete", data: { toolCallId: "call_bash_1", success: true, shellExecution: { exitCode: 3 } } })
  })

  it("skips streamed deltas and long lists by their first bytes, broken or not, fills in what an event leaves out, and tells a sub-agent's events", () => {
    assert.deepStrictEqual(decodeLine(`{"type":"assistant.message_delta","data":{"deltaContent":`), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(` { "type" : "session.skills_loaded", "data": `), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine(line({ type: "assistant.idle", data: {} })), { _tag: "Ignored" })
    assert.deepStrictEqual(decodeLine("not json"), { _tag: "Plain", text: "not json" })
    // Only a line that starts as one is skipped: text that quotes one further on is still text.
    const quoting = `Unexpected event after reconnect: {"type":"assistant.message_delta","data":{}}`
    assert.deepStrictEqual(decodeLine(quoting), { _tag: "Plain", text: quoting })
    assert.deepStrictEqual(decodeLine(line({ type: "session.error", data: {} })), event({ type: "session.error", data: { errorType: "", message: "" } }))
    assert.deepStrictEqual(decodeLine(line({ type: "assistant.message", data: {} })), event({ type: "assistant.message", data: { content: "" } }))
    // A tool called with no arguments (`list_agents`) has none rather than a missing field.
    assert.deepStrictEqual(decodeLine(line({ type: "tool.execution_start", data: { toolCallId: "c1", toolName: "list_agents" } })),
      event({ type: "tool.execution_start", data: { toolCallId: "c1", toolName: "list_agents", arguments: {} } }))
    assert.isTrue(isSubAgent({ data: { agentId: "a" } }))
    assert.isTrue(isSubAgent({ agentId: "a", data: {} }))
    assert.isFalse(isSubAgent({ data: {} }))
    assert.isFalse(isSubAgent({ agentId: "", data: {} }))
  })

  it("reads the usage file per model, and nothing from one that is not", () => {
    assert.deepStrictEqual(decodeUsageFile(fixture("write.usage.json")), [
      { inputTokens: 200, outputTokens: 40, cacheReadTokens: 60, cacheWriteTokens: 0, reasoningTokens: 10 }
    ])
    assert.deepStrictEqual(decodeUsageFile(fixture("no-request.usage.json")), [])
    assert.deepStrictEqual(decodeUsageFile(`{"modelMetrics":{"m":{"usage":{}}}}`), [
      { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }
    ])
    assert.isNull(decodeUsageFile(`{"modelMetrics":{"m":{"usage":{"inputTokens":"many"}}}}`))
    assert.isNull(decodeUsageFile("{ half"))
  })

  it("finds the API's own words and code in an error body, of either shape", () => {
    assert.deepStrictEqual(apiMessageOf(`{"message":"slow down","type":"rate_limit_error"}`), { message: "slow down", code: "rate_limit_error" })
    assert.deepStrictEqual(apiMessageOf(`{"error":{"message":"weekly","code":"user_weekly_rate_limited"}}`), { message: "weekly", code: "user_weekly_rate_limited" })
    assert.deepStrictEqual(apiMessageOf(`{"error":"flat"}`), { message: `{"error":"flat"}`, code: null })
    // An `error` that is no object is not where the words are: a proxy's body (NestJS's) has them beside it.
    const throttled = `{"statusCode":429,"message":"ThrottlerException: Too Many Requests","error":"Too Many Requests"}`
    assert.deepStrictEqual(apiMessageOf(throttled), { message: "ThrottlerException: Too Many Requests", code: null })
    assert.deepStrictEqual(apiMessageOf(`{"error":null,"message":"slow down"}`), { message: "slow down", code: null })
    assert.deepStrictEqual(apiMessageOf("null"), { message: "null", code: null })
    assert.deepStrictEqual(apiMessageOf(`"Too Many Requests"`), { message: `"Too Many Requests"`, code: null })
    assert.deepStrictEqual(apiMessageOf("[1]"), { message: "[1]", code: null })
    assert.deepStrictEqual(apiMessageOf("Too Many Requests"), { message: "Too Many Requests", code: null })
  })
})
