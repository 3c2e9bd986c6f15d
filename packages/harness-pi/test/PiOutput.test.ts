import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, judgeCompletion, outputOf } from "@spool/core"
import { limitConformance, outputConformance } from "@spool/testkit/harnessConformance"
import { inBatches, sortEvents } from "@spool/testkit/harnessEvents"
import { readFileSync } from "node:fs"
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

outputConformance({ agent: "pi", makeOutput: () => makePiOutput({ cwd }), chunks: [stdout(fixture("write.stdout.jsonl")), stderr("a warning\n")] })

limitConformance({
  agent: "pi",
  makeOutput: () => makePiOutput({ cwd }),
  now: 0,
  limits: [
    {
      name: "a 429 that outlasted pi's retries (recorded): after the provider's retry delay, the run failed with it",
      chunks: inBatches(fixture("limit-429.stdout.jsonl"), 89),
      limited: [{ message: "429 Rate limit reached, retry after 20s", resetAt: null, retryAfterMs: 20_000, resets: true }],
      failed: ["429 Rate limit reached, retry after 20s"],
      shown: ["… pi retries a failed model request (attempt 1/3)"]
    }
  ],
  notLimits: [
    { name: "a failed model request that is no limit (HTTP 400, recorded)", chunks: inBatches(fixture("api-400.stdout.jsonl"), 89) },
    {
      name: "the model's own text in a limit's words",
      chunks: [stdout(assistant("429 rate limit: quota exceeded, retry after 5s") + line({ type: "agent_end" }))],
      failed: []
    }
  ],
  agentSays: (words) => [stdout(assistant(words) + line({ type: "agent_end" }))]
})

describe("pi JSON output", () => {
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
    assert.deepStrictEqual(translate([stdout(assistant("Half"))], exited(1)).failed, ["pi ended without finishing its run"])
    assert.deepStrictEqual(translate([stderr("Error: No API key found for fake\n")], exited(1)).failed, [`${NO_END}: Error: No API key found for fake`])
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

describe("pi JSON output, event by event", () => {
  const start = (toolName: string, args: unknown, toolCallId = "t1") => line({ type: "tool_execution_start", toolCallId, toolName, args })
  const end = line({ type: "agent_end" })
  const run = (...lines: Array<string>) => translate([stdout(lines.join(""))])

  it("names a tool call by the first argument that says what it works on, files relative to the project", () => {
    const shown = (name: string, args: unknown) => run(start(name, args), end).display
    assert.strictEqual(shown("write", { path: `${cwd}/a.txt`, content: "x" }), "→ write a.txt\n")
    assert.strictEqual(shown("edit", { file_path: `${cwd}/src/b.ts` }), "→ edit src/b.ts\n")
    assert.strictEqual(shown("read", { path: `${cwd}x/c` }), `→ read ${cwd}x/c\n`)
    assert.strictEqual(shown("bash", { command: "ls -la\nrm x" }), "→ bash ls -la\n")
    assert.strictEqual(shown("grep", { pattern: "TODO" }), "→ grep TODO\n")
    assert.strictEqual(shown("fetch", { url: "https://example.com" }), "→ fetch https://example.com\n")
    assert.strictEqual(shown("write", { path: "", file_path: 7, command: "echo" }), "→ write echo\n")
    assert.strictEqual(shown("todo", { items: [] }), "→ todo\n")
    assert.strictEqual(shown("todo", "items"), "→ todo\n")
    assert.strictEqual(shown("todo", null), "→ todo\n")
    assert.strictEqual(shown("bash", { command: "x".repeat(200) }), `→ bash ${"x".repeat(119)}…\n`)
  })

  it("shows a failed tool call with the first line of its error, naming the call when it was seen", () => {
    const failed = (result: unknown, toolCallId = "t1") => line({ type: "tool_execution_end", toolCallId, toolName: "bash", isError: true, result })
    assert.strictEqual(run(start("bash", { command: "false" }), failed({ content: [{ type: "text", text: "exit 1\nmore" }] }), end).display, "→ bash false\n✗ bash false: exit 1\n")
    assert.strictEqual(run(failed({ content: "no such file" }, "t9"), end).display, "✗ bash: no such file\n")
    assert.strictEqual(run(failed(undefined), end).display, "✗ bash: failed\n")
    assert.strictEqual(run(failed({ content: [] }), end).display, "✗ bash: failed\n")
    assert.strictEqual(run(start("bash", { command: "true" }), line({ type: "tool_execution_end", toolCallId: "t1", toolName: "bash", result: { content: "ok" } }), end).display, "→ bash true\n")
  })

  it("takes the model's text as it ends, a line of its own, and skips messages with none and others' messages", () => {
    const message = (content: unknown, role = "assistant") => line({ type: "message_end", message: { role, content, stopReason: "stop" } })
    assert.strictEqual(run(message("Plain text"), end).agentText, "Plain text\n")
    assert.strictEqual(run(message("Ends\n"), end).agentText, "Ends\n")
    assert.strictEqual(run(message("  \n"), message([]), message("Result", "toolResult"), message("prompt", "user"), end).agentText, "")
    assert.strictEqual(run(message("  \n"), end).display, "")
  })

  it("counts each model request's tokens and cost, including cache writes", () => {
    const usage = { input: 10, output: 5, cacheRead: 3, cacheWrite: 2, cost: { total: 0.25 } }
    const result = run(line({ type: "message_end", message: { role: "assistant", content: [], stopReason: "stop", usage } }), line({ type: "message_end", message: { role: "user", content: [], usage } }), end)
    assert.deepStrictEqual(result.usage, [{ inputTokens: 10, outputTokens: 5, reasoningTokens: 0, cacheReadTokens: 3, cacheWriteTokens: 2, cost: 0.25 }])
  })

  it("makes an aborted request, or a failed one without a message, the run's failure", () => {
    const failed = (stopReason: string, errorMessage?: string) =>
      line({ type: "message_end", message: { role: "assistant", content: [{ type: "text", text: "partial" }], stopReason, ...(errorMessage === undefined ? {} : { errorMessage }) } })
    const aborted = run(failed("aborted", "Request was aborted\nby the user"), end)
    assert.deepStrictEqual(aborted.failed, ["Request was aborted"])
    assert.strictEqual(aborted.display, "✗ pi: Request was aborted\n")
    assert.strictEqual(aborted.agentText, "")
    assert.deepStrictEqual(run(failed("error"), end).failed, ["the model request ended with error"])
    assert.deepStrictEqual(run(failed("error", ""), end).failed, ["the model request ended with error"])
    assert.deepStrictEqual(run(failed("length", "cut short"), end).failed, [])
  })

  it("takes the final error of failed retries for the run's failure, and a retry for a run not yet ended", () => {
    const retry = line({ type: "auto_retry_start", attempt: 2, maxAttempts: 3, delayMs: 10, errorMessage: "503 overloaded\nbody" })
    const retried = run(end, retry)
    assert.deepStrictEqual(retried.failed, [NO_END])
    assert.strictEqual(retried.display, "… pi retries a failed model request (attempt 2/3): 503 overloaded\n")
    const gaveUp = run(assistant("Fine."), end, line({ type: "auto_retry_end", success: false, finalError: "429 quota exceeded\nbody" }))
    assert.deepStrictEqual(gaveUp.failed, ["429 quota exceeded"])
    assert.deepStrictEqual(gaveUp.limited.map((l) => [l.message, l.resetAt, l.retryAfterMs, l.resets]), [["429 quota exceeded", null, null, true]])
    assert.deepStrictEqual(run(assistant("Fine."), end, line({ type: "auto_retry_end", success: false })).failed, [])
    assert.deepStrictEqual(run(assistant("Fine."), end, line({ type: "auto_retry_end", success: true, finalError: "429 quota exceeded" })).failed, [])
  })

  it("shows stderr lines without their colours, and shows non-JSON stdout lines", () => {
    const result = translate([stderr("\x1b[33m  Warning: slow\x1b[0m  \n   \n"), stdout(`Booting\n${end}`)])
    assert.strictEqual(result.display, "Warning: slow\nBooting\n")
    assert.deepStrictEqual(translate([stderr("first\n  \nlast\n\n")], exited(1)).failed, [`${NO_END}: last`])
  })

  it("reads a multi-MiB error line in bounded form, its strings cut to their first KiB", () => {
    const result = run(end, line({ type: "auto_retry_end", success: false, finalError: "错".repeat(100_000) }))
    assert.strictEqual(result.failed.length, 1)
    assert.isAtMost(new TextEncoder().encode(result.failed[0]!).length, 1024)
    assert.match(result.failed[0]!, /^错+$/)
  })

  it("reads a long finished message whole, and drops a line longer than it may keep", () => {
    const text = `${"word ".repeat(20_000)}<promise>COMPLETE</promise>`
    const spaced = ` { "type" : "message_end", "message": { "role": "assistant", "content": ${JSON.stringify(text)} } }\n`
    // In pieces, as a pipe gives it: its first bytes decide that it is kept whole.
    assert.strictEqual(translate(inBatches(spaced + end, 4096)).agentText, `${text}\n`)
    assert.strictEqual(translate(inBatches(assistant(text) + end, 4096)).agentText, `${text}\n`)
    const output = makePiOutput({ cwd, maxLineLength: 100 })
    const dropped = sortEvents([stdout(assistant("x".repeat(200))), exited()].flatMap(output.feed))
    assert.strictEqual(dropped.agentText, "")
    assert.match(dropped.display, /pi printed a \d+-byte line on stdout; it is only in the log/)
  })
})
