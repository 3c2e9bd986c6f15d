import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, outputOf } from "@spool/core"
import { limitConformance, outputConformance } from "@spool/testkit/harnessConformance"
import { inBatches, sortEvents } from "@spool/testkit/harnessEvents"
import { existsSync, readFileSync } from "node:fs"
import { makeQwenOutput, NO_RESULT, permissionWarning, untrustedWarning } from "../src/QwenOutput.js"

// Fixtures are the real output of qwen 0.24.4 (`qwen -o stream-json -m qwen-test-model [--yolo]`,
// prompt on stdin; limit-heartbeat with QWEN_CODE_UNATTENDED_RETRY=1; the limit runs stopped
// with SIGTERM) against a fake OpenAI-compatible server, run in /tmp/qw/proj.
const cwd = "/tmp/qw/proj"
const now = Date.parse("2026-11-29T08:00:00Z")
const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8")
const stdout = (text: string) => outputOf("stdout", text)
const stderr = (text: string) => outputOf("stderr", text)
const exited = (exitCode: number | null = 0, signal: string | null = null) => HarnessEvent.Exited({ exitCode, signal })
const line = (event: object) => `${JSON.stringify(event)}\n`
const makeOutput = () => makeQwenOutput({ cwd, now: () => now })

/** A recorded run's raw output: its stdout in chunks of `size` bytes, then its stderr if any. */
const recordedChunks = (name: string, size = 97) => {
  const err = new URL(`fixtures/${name}.stderr.txt`, import.meta.url)
  return [...inBatches(fixture(`${name}.stdout.jsonl`), size), ...(existsSync(err) ? [stderr(readFileSync(err, "utf8"))] : [])]
}

/** Feeds the chunks, then `Exited`, and sorts what came out. */
const translate = (chunks: ReadonlyArray<HarnessEvent>, end: HarnessEvent = exited()) => {
  const output = makeOutput()
  return sortEvents([...chunks, end].flatMap(output.feed))
}

const recorded = (name: string, exitCode: number) => translate(recordedChunks(name), exited(exitCode))

const assistant = (content: ReadonlyArray<object>, parent: string | null = null) =>
  line({ type: "assistant", parent_tool_use_id: parent, message: { content } })
const success = line({ type: "result", subtype: "success", is_error: false, result: "", usage: { input_tokens: 1, output_tokens: 1 }, permission_denials: [] })
const failure = (message: string) =>
  line({ type: "result", subtype: "error_during_execution", is_error: true, usage: { input_tokens: 0, output_tokens: 0 }, permission_denials: [], error: { message } })

outputConformance({
  agent: "qwen",
  makeOutput,
  chunks: [stdout(fixture("write-yolo.stdout.jsonl")), stderr(fixture("write-yolo.stderr.txt"))]
})

limitConformance({
  agent: "qwen",
  makeOutput: (at) => makeQwenOutput({ cwd, now: () => at }),
  now,
  limits: [
    {
      name: "qwen waiting out an HTTP 429 with a retry-after of an hour, stopped after a minute (recorded): after the wait it names",
      chunks: recordedChunks("limit-heartbeat"),
      exitCode: 143,
      // Each 30 s of the wait says so again: spool's run ends at the first (endsOnLimit).
      limited: [3570, 3540].map((seconds) => ({
        message: `qwen is waiting for API capacity: its model API answered with a rate or usage limit (HTTP 429 or 529); next try in ${seconds}s`,
        resetAt: null,
        retryAfterMs: seconds * 1000,
        resets: true
      })),
      failed: [`${NO_RESULT}: Operation cancelled.`],
      shown: ["[qwen-code] Waiting for API capacity... attempt 1, retry in 3570s"]
    },
    {
      name: "a quota spent until a reset, which qwen does not retry (recorded): at the reset it names",
      chunks: recordedChunks("quota-exhausted"),
      exitCode: 1,
      limited: [{
        message: "Quota exhausted: Quota exceeded: your daily quota will reset at 2026-11-30T00:00:00Z",
        resetAt: Date.parse("2026-11-30T00:00:00Z"),
        retryAfterMs: null,
        resets: true
      }],
      failed: ["Quota exhausted: Quota exceeded: your daily quota will reset at 2026-11-30T00:00:00Z"],
      shown: ["✗ Quota exhausted: Quota exceeded"]
    },
    {
      name: "qwen retrying after a billing quota's 429, without QWEN_CODE_UNATTENDED_RETRY, stopped (recorded): after qwen's wait, not restored by waiting",
      chunks: recordedChunks("limit-retrying"),
      exitCode: 143,
      limited: [{ message: "429 You exceeded your current quota, please check your plan and billing details.", resetAt: null, retryAfterMs: 60_000, resets: false }],
      failed: [`${NO_RESULT}: Operation cancelled.`],
      shown: ["Retrying in 60s (attempt 1/10)", "Retrying provider attempt"]
    },
    {
      name: "a run that ends on an HTTP 429",
      chunks: [stdout(assistant([{ type: "text", text: "[API Error: 429 Rate limit reached]" }]) + failure("[API Error: 429 Rate limit reached]"))],
      exitCode: 1,
      limited: [{ message: "429 Rate limit reached", resetAt: null, retryAfterMs: null, resets: true }],
      failed: ["429 Rate limit reached"]
    }
  ],
  notLimits: [
    { name: "an ordinary API error (HTTP 400, recorded)", chunks: recordedChunks("api-400"), exitCode: 1, failed: ["400 bad request: context too long"] },
    {
      name: "the model's own text about a quota, and a tool's output naming one",
      chunks: [
        stdout(
          assistant([{ type: "text", text: "Quota exceeded: 429 Rate limit reached, retry in 3570s" }]) +
            line({ type: "user", parent_tool_use_id: null, message: { content: [{ type: "tool_result", tool_use_id: "c", is_error: true, content: "429 Too Many Requests" }] } }) +
            success
        )
      ]
    }
  ],
  agentSays: (words) => [stdout(assistant([{ type: "text", text: words }]) + success)]
})

describe("qwen JSON output", () => {
  it("takes the model's text as agent text, each message on a line of its own, never a tool's input or the result's echo", () => {
    const result = recorded("write-yolo", 0)
    assert.strictEqual(result.agentText, "Writing greeting.txt.\nThe file is written.\n\n<promise>COMPLETE</promise>\n")
    assert.notInclude(result.agentText, "hello from qwen")
    assert.include(result.display, "Writing greeting.txt.\n→ write_file greeting.txt\nThe file is written.")
    assert.deepStrictEqual(result.failed, [])
    assert.deepStrictEqual(result.warnings, [])
    assert.deepStrictEqual(result.limited, [])
  })

  it("reports the run's tokens once, cached ones apart from input, no thinking, cost unknown", () => {
    // Two requests of 100 prompt tokens (30 cached) and 20 completion tokens.
    assert.deepStrictEqual(recorded("write-yolo", 0).usage, [{ inputTokens: 140, outputTokens: 40, reasoningTokens: 0, cacheReadTokens: 60, cacheWriteTokens: 0, cost: null }])
  })

  it("shows a declined write as failed and warns once, naming the call, to rerun with --allow-all (recorded)", () => {
    const result = recorded("write-default", 0)
    assert.include(result.display, "✗ write_file denied.txt: Qwen Code requires permission to use \"write_file\", but that permission was declined.")
    assert.deepStrictEqual(result.warnings, [permissionWarning("write_file denied.txt")])
    assert.match(result.warnings[0]!, /^qwen denied a tool call that needs permission \(write_file denied\.txt\).*--allow-all/)
    assert.deepStrictEqual(result.failed, [])
  })

  it("makes a failed result a failure carrying the API's words, qwen's report shown once and never agent text (recorded)", () => {
    const result = recorded("api-400", 1)
    assert.deepStrictEqual(result.failed, ["400 bad request: context too long"])
    assert.strictEqual(result.display.split("✗ [API Error: 400 bad request: context too long]").length, 2)
    assert.notInclude(result.display, "✗ 400 bad request")
    assert.strictEqual(result.agentText, "")
    assert.strictEqual(result.usage.length, 1)
  })

  it("shows a failed result's error when no message carried it, and names the subtype when it has none", () => {
    assert.deepStrictEqual(translate([stdout(failure("Connection error."))], exited(1)).failed, ["Connection error."])
    assert.include(translate([stdout(failure("Connection error."))], exited(1)).display, "✗ Connection error.")
    const bare = translate([stdout(line({ type: "result", subtype: "error_max_turns", is_error: true }))], exited(1))
    assert.deepStrictEqual(bare.failed, ["qwen reported an error (error_max_turns)"])
  })

  it("makes a run that ends without a result a failure carrying qwen's last stderr line", () => {
    const auth = "No auth type is selected. Please configure an auth type (e.g. via settings or `--auth-type`) before running in non-interactive mode."
    assert.deepStrictEqual(translate([stderr(`${auth}\n`)], exited(1)).failed, [`${NO_RESULT}: ${auth}`])
    assert.deepStrictEqual(translate([], exited(null, "SIGKILL")).failed, ["qwen ended without a result"])
  })

  it("shows a sub-agent's text and calls indented, never as agent text", () => {
    const result = translate([
      stdout(assistant([{ type: "text", text: "Looking." }, { type: "tool_use", id: "s1", name: "read_file", input: { file_path: `${cwd}/src/a.ts` } }], "task-1") + success)
    ])
    assert.strictEqual(result.agentText, "")
    assert.include(result.display, "  → read_file src/a.ts")
    assert.notInclude(result.display, "Looking.")
  })

  it("names a call by its file, command, pattern or query, else by its name alone", () => {
    const calls = [
      { type: "tool_use", id: "1", name: "run_shell_command", input: { command: "npm test\nmore", description: "Runs tests." } },
      { type: "tool_use", id: "2", name: "glob", input: { pattern: "**/*.ts" } },
      { type: "tool_use", id: "3", name: "tool_search", input: { query: "web" } },
      { type: "tool_use", id: "4", name: "get_goal", input: {} },
      { type: "tool_use", id: "5", name: "edit", input: { file_path: "/elsewhere/b.ts" } }
    ]
    const display = translate([stdout(assistant(calls) + success)]).display
    assert.include(display, "→ run_shell_command npm test\n→ glob **/*.ts\n→ tool_search web\n→ get_goal\n→ edit /elsewhere/b.ts\n")
  })

  it("warns when qwen turns --yolo off in a folder it does not trust", () => {
    const result = translate([stderr("Approval mode overridden to \"default\" because the current folder is not trusted.\n")])
    assert.deepStrictEqual(result.warnings, [untrustedWarning])
    assert.strictEqual(
      untrustedWarning,
      "qwen does not trust this folder, so it ran without --allow-all's approvals; trust the folder in qwen (its trustedFolders.json), or turn its folder trust off"
    )
    // Only qwen's own notice, not a line quoting it.
    assert.deepStrictEqual(translate([stderr("grep: Approval mode overridden to \"default\" because the current folder is not trusted: no match\n")]).warnings, [])
  })

  it("shows stderr lines as they are, blank ones dropped", () => {
    const result = translate([stderr("\u001b[33mOperation cancelled.\u001b[0m\n\n  \t\n")], exited(130))
    assert.strictEqual(result.display, "Operation cancelled.\n")
    assert.deepStrictEqual(result.failed, [`${NO_RESULT}: Operation cancelled.`])
  })
})
