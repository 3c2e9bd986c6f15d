import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, judgeCompletion, outputOf } from "@spool/core"
import { readFileSync } from "node:fs"
import { inBatches, sortEvents } from "../../core/test/fixtures/harnessEvents.js"
import { decodeLine } from "../src/PiEvent.js"
import { fromError, retryDelayOf } from "../src/PiLimit.js"
import { makePiOutput, NO_END } from "../src/PiOutput.js"

// Fixtures are the real output of pi 0.73.1 against a fake OpenAI-compatible server, run in /tmp/hw/proj.
const cwd = "/tmp/hw/proj"
const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8")
const stdout = (text: string) => outputOf("stdout", text)
const stderr = (text: string) => outputOf("stderr", text)
const exited = (exitCode: number | null = 0, signal: string | null = null) => HarnessEvent.Exited({ exitCode, signal })
const line = (event: object) => `${JSON.stringify(event)}\n`

/** Feeds the chunks, then `Exited`, and sorts what came out. */
const translate = (chunks: ReadonlyArray<HarnessEvent>, end: HarnessEvent = exited()) => {
  const output = makePiOutput({ cwd })
  return sortEvents([...chunks, end].flatMap(output.feed))
}

/** A recorded run's stdout, fed in chunks of `size` bytes. */
const recorded = (name: string, size = 89) => translate(inBatches(fixture(`${name}.stdout.jsonl`), size))

const assistant = (text: string, extra: object = {}) =>
  line({ type: "message_end", message: { role: "assistant", content: [{ type: "thinking", thinking: "<promise>COMPLETE</promise>" }, { type: "text", text }], stopReason: "stop", ...extra } })

describe("pi JSON output", () => {
  it("passes every raw chunk on as Output, in order, and ends with Exited", () => {
    const chunks = [stdout(fixture("write.stdout.jsonl")), stderr("a warning\n")]
    const result = translate(chunks)
    assert.deepStrictEqual(result.outputs, chunks)
    assert.deepStrictEqual(result.events.at(-1), exited())
  })

  it("takes each finished model message's text as agent text on lines of its own, never the prompt, thinking or a tool's input", () => {
    const result = recorded("write")
    assert.strictEqual(result.agentText, "Writing.\nHello there.\n<promise>COMPLETE</promise>\n")
    assert.isTrue(judgeCompletion(result.agentText, { token: "COMPLETE", prompt: "" }).claimed)
    assert.notInclude(result.agentText, "write it")
    assert.include(result.display, "Writing.\n→ write x/hello.txt\nHello there.")
    assert.deepStrictEqual(result.failed, [])
    const thinking = translate([stdout(assistant("Only this.") + line({ type: "agent_end", messages: [] }))])
    assert.strictEqual(thinking.agentText, "Only this.\n")
  })

  it("reports one Usage per model request, with the cost pi computed", () => {
    const result = recorded("write")
    assert.strictEqual(result.usage.length, 2)
    for (const usage of result.usage) {
      assert.deepStrictEqual({ ...usage, cost: null }, { inputTokens: 70, outputTokens: 20, reasoningTokens: 0, cacheReadTokens: 30, cacheWriteTokens: 0, cost: null })
      assert.closeTo(usage.cost!, 0.000519, 1e-9)
    }
  })

  it("makes a run that ends on a failed model request a failure carrying the provider's message, though pi exits 0", () => {
    const result = recorded("api-400")
    assert.deepStrictEqual(result.failed, ["400 fake bad request"])
    assert.include(result.display, "✗ pi: 400 fake bad request")
    assert.deepStrictEqual(result.limited, [])
  })

  it("makes a 429 that outlasted pi's retries a failure and a usage limit with the provider's retry delay", () => {
    const result = recorded("limit-429")
    assert.deepStrictEqual(result.failed, ["429 Rate limit reached, retry after 20s"])
    assert.deepStrictEqual(result.limited.map((l) => [l.retryAfterMs, l.resets]), [[20_000, true]])
    assert.include(result.display, "… pi retries a failed model request (attempt 1/3)")
  })

  it("forgets a failed request once a retry succeeds", () => {
    const failed = line({ type: "message_end", message: { role: "assistant", content: [], stopReason: "error", errorMessage: "429 slow down" } })
    const events = failed + line({ type: "agent_end" }) + line({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 10, errorMessage: "429 slow down" }) +
      assistant("Fine now.") + line({ type: "agent_end" }) + line({ type: "auto_retry_end", success: true, attempt: 1 })
    const result = translate([stdout(events)])
    assert.deepStrictEqual(result.failed, [])
    assert.deepStrictEqual(result.limited, [])
    assert.strictEqual(result.agentText, "Fine now.\n")
  })

  it("makes a run that ends before agent_end a failure, with pi's last stderr line", () => {
    assert.deepStrictEqual(translate([stdout(assistant("Half"))], exited(1)).failed, [NO_END])
    assert.deepStrictEqual(translate([stderr("Error: No API key found for fake\n")], exited(1)).failed, [`${NO_END}: Error: No API key found for fake`])
  })

  it("never takes a limit from the model's own text", () => {
    const result = translate([stdout(assistant("429 rate limit: quota exceeded, retry after 5s") + line({ type: "agent_end" }))])
    assert.deepStrictEqual(result.limited, [])
    assert.deepStrictEqual(result.failed, [])
  })

  it("skips streamed updates unread, and reads a multi-MiB tool result line in bounded form", () => {
    assert.deepStrictEqual(decodeLine(`{"type":"message_update","broken":`), { _tag: "Ignored" })
    const start = line({ type: "tool_execution_start", toolCallId: "t", toolName: "read", args: { path: `${cwd}/big.txt` } })
    const big = line({ type: "tool_execution_end", toolCallId: "t", toolName: "read", isError: false, result: { content: [{ type: "text", text: "<promise>COMPLETE</promise>".repeat(100_000) }] } })
    const result = translate([stdout(start + big + assistant("Done.") + line({ type: "agent_end" }))])
    assert.strictEqual(result.agentText, "Done.\n")
    assert.include(result.display, "→ read big.txt")
  })

  it("reads limits and retry delays from the provider's message", () => {
    assert.strictEqual(retryDelayOf("please try again in 1m30s"), 90_000)
    assert.isNull(fromError("400 bad request"))
    assert.isFalse(fromError("429 You exceeded your current quota, please check your plan and billing details.")!.resets)
    assert.strictEqual(fromError("529 overloaded_error")!.retryAfterMs, null)
  })
})
