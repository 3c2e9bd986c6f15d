import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, outputOf } from "@spool/core"
import { inBatches, sortEvents } from "@spool/testkit/harnessEvents"
import { readFileSync } from "node:fs"
import { makeQwenOutput, permissionWarning } from "../src/QwenOutput.js"

// How qwen's messages, tool calls and their results are read: the lines are as qwen 0.24.4 prints
// them (`qwen -o stream-json`), the recorded ones from its runs against a fake server.
const cwd = "/tmp/qw/proj"
const now = Date.parse("2026-11-29T08:00:00Z")
const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8")
const stdout = (text: string) => outputOf("stdout", text)
const exited = (exitCode: number | null = 0) => HarnessEvent.Exited({ exitCode, signal: null })
const line = (event: object) => `${JSON.stringify(event)}\n`
const translate = (chunks: ReadonlyArray<HarnessEvent>, end: HarnessEvent = exited(), maxLineLength?: number) => {
  const output = makeQwenOutput({ cwd, now: () => now, ...(maxLineLength === undefined ? {} : { maxLineLength }) })
  return sortEvents([...chunks, end].flatMap(output.feed))
}

const assistant = (content: ReadonlyArray<object>, parent: string | null = null) =>
  line({ type: "assistant", parent_tool_use_id: parent, message: { content } })
const text = (words: string) => ({ type: "text", text: words })
const call = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input })
const results = (content: ReadonlyArray<object>, parent: string | null = null) =>
  line({ type: "user", parent_tool_use_id: parent, message: { content } })
const failedResult = (id: string, content: unknown) => ({ type: "tool_result", tool_use_id: id, is_error: true, content })
const success = line({ type: "result", subtype: "success", is_error: false, result: "", usage: { input_tokens: 1, output_tokens: 1 }, permission_denials: [] })
const failure = (message: string) =>
  line({ type: "result", subtype: "error_during_execution", is_error: true, usage: { input_tokens: 0, output_tokens: 0 }, permission_denials: [], error: { message } })

describe("qwen's messages and tool calls", () => {
  it("takes qwen's report of a failed request, in any of its forms, as no agent text, shown once (recorded)", () => {
    const quota = translate(inBatches(fixture("quota-exhausted.stdout.jsonl"), 97), exited(1))
    assert.strictEqual(quota.agentText, "")
    assert.strictEqual(quota.display.split("✗ Quota exhausted: Quota exceeded: your daily quota will reset at 2026-11-30T00:00:00Z\n").length, 2)
    const reports = [
      "[API Error: 429 Rate limit reached for requests]\nPossible quota limitations in place or slow response times detected. Please wait and try again later.",
      "Qwen OAuth free tier has been discontinued as of 2026-04-15.\n\nTo continue using Qwen Code, switch to another auth method.",
      "Qwen OAuth quota exceeded: your daily requests are used up.",
      "\n\n[API Error: 400 bad request: context too long]"
    ]
    for (const report of reports) {
      const run = translate([stdout(assistant([text(report)]) + failure(report.trim()))], exited(1))
      assert.strictEqual(run.agentText, "", report)
      assert.strictEqual(run.display.split(`✗ ${report.trim().split("\n")[0]}\n`).length, 2, report)
    }
  })

  it("takes the model's text quoting an API error as agent text", () => {
    for (const words of [
      "The server said [API Error: 400 bad request] when the file was too large.",
      "The last request failed with [API Error: 400 bad request]",
      "[API Error: 400 bad request] is what the tool returned; I will shorten the request.",
      "[API Error: 400 bad request]\nThat was the server.\nI will shorten the request."
    ]) {
      assert.strictEqual(translate([stdout(assistant([text(words)]) + success)]).agentText, `${words}\n`, words)
    }
  })

  it("ends each message with one newline, and skips a message of whitespace", () => {
    const run = translate([stdout(assistant([text("Writing it.\n")]) + assistant([text(" \n")]) + assistant([text("\nDone.")]) + success)])
    assert.strictEqual(run.agentText, "Writing it.\n\nDone.\n")
    assert.strictEqual(run.display, "Writing it.\n\nDone.\n")
  })

  it("names a call by the first non-empty of its file, path, url, skill or description, and a denied call with null input by its name", () => {
    const cases: ReadonlyArray<readonly [ReturnType<typeof call>, string]> = [
      [call("1", "notebook_edit", { notebook_path: `${cwd}/a.ipynb` }), "notebook_edit a.ipynb"],
      [call("2", "list_directory", { path: `${cwd}/src` }), "list_directory src"],
      [call("3", "web_fetch", { url: "https://example.com/docs", prompt: "Summarise." }), "web_fetch https://example.com/docs"],
      [call("4", "skill", { skill: "review" }), "skill review"],
      [call("5", "agent", { description: "Find the tests", prompt: "Look for tests." }), "agent Find the tests"],
      [call("6", "glob", { path: "", pattern: "**/*.md" }), "glob **/*.md"]
    ]
    for (const [block, shown] of cases) {
      assert.strictEqual(translate([stdout(assistant([block]) + success)]).display, `→ ${shown}\n`, shown)
    }
    const denied = line({ type: "result", subtype: "success", is_error: false, permission_denials: [{ tool_name: "write_file", tool_input: null }] })
    assert.deepStrictEqual(translate([stdout(denied)]).warnings, [permissionWarning("write_file")])
  })

  it("shows a failed tool result under its call, a sub-agent's indented, with `failed` when it says nothing", () => {
    const run = translate([
      stdout(
        assistant([call("c1", "read_file", { file_path: `${cwd}/a.ts` })]) +
          results([failedResult("c1", "File not found.")]) +
          assistant([call("s1", "run_shell_command", { command: "npm test" })], "task-1") +
          results([failedResult("s1", "")], "task-1") +
          results([failedResult("unknown", [{ type: "text", text: "Tool call cancelled." }])]) +
          success
      )
    ])
    assert.strictEqual(
      run.display,
      "→ read_file a.ts\n✗ read_file a.ts: File not found.\n  → run_shell_command npm test\n  ✗ run_shell_command npm test: failed\n✗ tool call: Tool call cancelled.\n"
    )
  })

  it("fails with the main agent's report of a failed request, not a sub-agent's, when the result's error is blank", () => {
    const main = translate([stdout(assistant([text("[API Error: 429 Rate limit reached]")]) + failure("\n"))], exited(1))
    assert.deepStrictEqual(main.failed, ["429 Rate limit reached"])
    assert.deepStrictEqual(main.limited, [{ _tag: "Limited", message: "429 Rate limit reached", resetAt: null, retryAfterMs: null, resets: true }])
    const sub = translate([stdout(assistant([text("[API Error: 400 bad request]")], "task-1") + failure("Connection error."))], exited(1))
    assert.strictEqual(sub.display, "  ✗ [API Error: 400 bad request]\n✗ Connection error.\n")
  })

  it("reads a long message of the agent whole, in pieces as a pipe gives it, and drops a line longer than it may keep", () => {
    const words = `${"word ".repeat(20_000)}<promise>COMPLETE</promise>`
    const spaced = ` { "type" : "assistant", "parent_tool_use_id": null, "message": { "content": [{ "type": "text", "text": ${JSON.stringify(words)} }] } }\n`
    assert.strictEqual(translate(inBatches(spaced + success, 4096)).agentText, `${words}\n`)
    assert.strictEqual(translate(inBatches(assistant([text(words)]) + success, 4096)).agentText, `${words}\n`)
    const dropped = translate([stdout(assistant([text("x".repeat(200))]) + success)], exited(), 100)
    assert.strictEqual(dropped.agentText, "")
    assert.match(dropped.display, /^\(qwen printed a \d+-byte line on stdout; it is only in the log\)$/m)
  })
})
