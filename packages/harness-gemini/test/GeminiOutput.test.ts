import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, outputOf } from "@spool/core"
import { readFileSync } from "node:fs"
import { inBatches, sortEvents } from "../../core/test/fixtures/harnessEvents.js"
import { apiErrorOf } from "../src/GeminiEvent.js"
import { fromError, retryingAfterLimit } from "../src/GeminiLimit.js"
import { makeGeminiOutput, NO_RESULT, untrustedWarning } from "../src/GeminiOutput.js"

// Fixtures are the real output of gemini 0.61.0 against a fake model server, run in /tmp/hw/proj.
const cwd = "/tmp/hw/proj"
const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8")
const stdout = (text: string) => outputOf("stdout", text)
const stderr = (text: string) => outputOf("stderr", text)
const exited = (exitCode: number | null = 0, signal: string | null = null) => HarnessEvent.Exited({ exitCode, signal })
const line = (event: object) => `${JSON.stringify(event)}\n`

/** Feeds the chunks, then `Exited`, and sorts what came out. */
const translate = (chunks: ReadonlyArray<HarnessEvent>, end: HarnessEvent = exited()) => {
  const output = makeGeminiOutput({ cwd })
  return sortEvents([...chunks, end].flatMap(output.feed))
}

/** A recorded run: its stdout in chunks of `size` bytes, its stderr, its exit code. */
const recorded = (name: string, exitCode: number, size = 97) =>
  translate([...inBatches(fixture(`${name}.stdout.jsonl`), size), stderr(fixture(`${name}.stderr.txt`))], exited(exitCode))

describe("gemini JSON output", () => {
  it("passes every raw chunk on as Output, in order, and ends with Exited", () => {
    const chunks = [stdout(fixture("write-yolo.stdout.jsonl")), stderr(fixture("write-yolo.stderr.txt"))]
    const result = translate(chunks)
    assert.deepStrictEqual(result.outputs, chunks)
    assert.deepStrictEqual(result.events.at(-1), exited())
  })

  it("takes the model's streamed text as agent text, a turn after a tool call on a new line, never the prompt or a tool's input", () => {
    const result = recorded("write-yolo", 0)
    assert.strictEqual(result.agentText, "Writing.\nHello <promise>COMPLETE</promise>\n")
    assert.notInclude(result.agentText, "write it")
    assert.include(result.display, "Writing.\n→ write_file x/hello.txt\nHello <promise>COMPLETE</promise>")
    assert.deepStrictEqual(result.failed, [])
    assert.deepStrictEqual(result.warnings, [])
  })

  it("reports the run's tokens once, cached ones apart from input, thinking from the total, cost unknown", () => {
    const result = recorded("write-yolo", 0)
    // Two requests of 100 prompt tokens (30 cached) and 20 candidate tokens, 15 of thinking each.
    assert.deepStrictEqual(result.usage, [{ inputTokens: 140, outputTokens: 40, reasoningTokens: 30, cacheReadTokens: 60, cacheWriteTokens: 0, cost: null }])
  })

  it("warns once, naming the call, when a write was not offered for want of approval", () => {
    const result = recorded("write-default", 0)
    assert.strictEqual(result.warnings.length, 1)
    assert.match(result.warnings[0]!, /gemini did not run a tool call that needs approval \(write_file x\/hello\.txt\).*--allow-all/)
    assert.include(result.display, "✗ write_file x/hello.txt: Tool \"write_file\" not found.")
    assert.notInclude(result.agentText, "not found")
  })

  it("warns when gemini turns --yolo off in a folder it does not trust", () => {
    const result = translate([stderr("Approval mode overridden to \"default\" because the current folder is not trusted.\n")])
    assert.deepStrictEqual(result.warnings, [untrustedWarning])
  })

  it("makes a failed result after an API error a failure carrying the API's message, its stack trace not shown", () => {
    const result = recorded("api-400", 144)
    assert.deepStrictEqual(result.failed, ["fake bad request (HTTP 400)"])
    assert.include(result.display, "✗ fake bad request (HTTP 400)")
    assert.notMatch(result.display, /\n\s+at /)
    assert.include(result.display, "Error when talking to Gemini API")
    assert.notInclude(result.display, "256-color")
    assert.include(result.display, "Ripgrep is not available")
    assert.deepStrictEqual(result.limited, [])
    assert.strictEqual(result.usage.length, 1)
  })

  it("makes a run that ends without a result a failure carrying gemini's last stderr line (an untrusted folder)", () => {
    const result = recorded("untrusted", 55)
    assert.strictEqual(result.failed.length, 1)
    assert.match(result.failed[0]!, new RegExp(`^${NO_RESULT}: Gemini CLI is not running in a trusted directory`))
    assert.notInclude(result.failed[0]!, "\x1b[")
    assert.deepStrictEqual(translate([]).failed, [NO_RESULT])
  })

  it("makes a failed result with a 429 a usage limit with the API's retry delay, or the one gemini printed while retrying", () => {
    const body = { error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37s" }] } }
    const failed = line({ type: "result", status: "error", error: { type: "unknown", message: `[API Error: ${JSON.stringify(body)}]` }, stats: {} })
    const result = translate([stdout(failed)], exited(1))
    assert.deepStrictEqual(result.failed, ["Resource has been exhausted (e.g. check quota). (HTTP 429)"])
    assert.deepStrictEqual(result.limited.map((l) => [l.retryAfterMs, l.resets]), [[37_000, true]])

    const plain = line({ type: "result", status: "error", error: { message: "Quota exceeded for quota metric 'Requests per day'" } })
    const retried = translate([stderr(fixture("limit-retry.stderr.txt")), stdout(plain)], exited(1))
    assert.deepStrictEqual(retried.limited.map((l) => l.retryAfterMs), [37_000])
  })

  it("makes the quota error gemini ends with after its own retries a usage limit with the delay it names", () => {
    const result = recorded("api-429", 173)
    assert.deepStrictEqual(result.failed, ["Quota exceeded for metric: generate_content_free_tier_requests, limit: 50. Please retry in 1.5s."])
    assert.deepStrictEqual(result.limited.map((l) => [l.retryAfterMs, l.resets]), [[1_500, true]])
    assert.include(result.display, "Attempt 10 failed: Quota exceeded")
  })

  it("never takes a limit from the model's own text, nor an ordinary API error for one", () => {
    const text = line({ type: "message", role: "assistant", content: "Quota exceeded: 429 RESOURCE_EXHAUSTED", delta: true })
    const done = line({ type: "result", status: "success", stats: {} })
    assert.deepStrictEqual(translate([stdout(text + done)]).limited, [])
    assert.isNull(fromError("[API Error: {\"error\":{\"code\":400,\"message\":\"bad\",\"status\":\"INVALID_ARGUMENT\"}}]"))
  })

  it("reads API error bodies and gemini's retry lines", () => {
    assert.deepStrictEqual(apiErrorOf("[API Error: {\"error\":{\"code\":400,\"message\":\"m\",\"status\":\"S\"}}]"), { code: 400, message: "m", status: "S", retryDelayMs: null })
    assert.isNull(apiErrorOf("[API Error: socket hang up]"))
    const hangUp = translate([stdout(line({ type: "result", status: "error", error: { message: "[API Error: socket hang up]" } }))])
    assert.deepStrictEqual(hangUp.failed, ["socket hang up"])
    assert.deepStrictEqual(retryingAfterLimit(fixture("limit-retry.stderr.txt").split("\n")[0]!), { retryAfterMs: 37_500 })
    assert.isNull(retryingAfterLimit("Attempt 1 failed: socket hang up"))
    assert.isFalse(fromError("You exceeded your current quota, please check your plan and billing details.")!.resets)
  })

  it("reads a multi-MiB tool result line in bounded form and still the model's text after it", () => {
    const use = line({ type: "tool_use", tool_name: "read_file", tool_id: "t1", parameters: { absolute_path: `${cwd}/big.txt` } })
    const big = line({ type: "tool_result", tool_id: "t1", status: "success", output: "<promise>COMPLETE</promise>".repeat(100_000) })
    const text = line({ type: "message", role: "assistant", content: "Done.", delta: true })
    const result = translate([stdout(use + big + text + line({ type: "result", status: "success", stats: {} }))])
    assert.strictEqual(result.agentText, "Done.\n")
    assert.include(result.display, "→ read_file big.txt")
  })
})
