import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, outputOf } from "@spool/core"
import { limitConformance, outputConformance } from "@spool/testkit/harnessConformance"
import { inBatches, sortEvents } from "@spool/testkit/harnessEvents"
import { readFileSync } from "node:fs"
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

/** A recorded run's raw output: its stdout in chunks of `size` bytes, then its stderr. */
const recordedChunks = (name: string, size = 97) => [...inBatches(fixture(`${name}.stdout.jsonl`), size), stderr(fixture(`${name}.stderr.txt`))]

/** A recorded run, read: its output, then its exit code. */
const recorded = (name: string, exitCode: number, size = 97) => translate(recordedChunks(name, size), exited(exitCode))

outputConformance({
  agent: "gemini",
  makeOutput: () => makeGeminiOutput({ cwd }),
  chunks: [stdout(fixture("write-yolo.stdout.jsonl")), stderr(fixture("write-yolo.stderr.txt"))]
})

/** The error message of a recorded run's failed result, as gemini printed it. */
const recordedError = (name: string): string => JSON.parse(fixture(`${name}.stdout.jsonl`).trim().split("\n").at(-1)!).error.message

const exhausted = { error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37s" }] } }

limitConformance({
  agent: "gemini",
  makeOutput: () => makeGeminiOutput({ cwd }),
  now: 0,
  limits: [
    {
      name: "the quota error gemini ends with after its own retries (recorded): after the delay it names, the run failed with it",
      chunks: recordedChunks("api-429"),
      exitCode: 173,
      limited: [{ message: recordedError("api-429"), resetAt: null, retryAfterMs: 1_500, resets: true }],
      failed: ["Quota exceeded for metric: generate_content_free_tier_requests, limit: 50. Please retry in 1.5s."],
      shown: ["Attempt 10 failed: Quota exceeded"]
    },
    {
      name: "a failed result with a 429 (RESOURCE_EXHAUSTED): after the API's RetryInfo delay",
      chunks: [stdout(line({ type: "result", status: "error", error: { type: "unknown", message: `[API Error: ${JSON.stringify(exhausted)}]` }, stats: {} }))],
      exitCode: 1,
      limited: [{ message: "Resource has been exhausted (e.g. check quota).", resetAt: null, retryAfterMs: 37_000, resets: true }],
      failed: ["Resource has been exhausted (e.g. check quota). (HTTP 429)"]
    },
    {
      name: "a quota in a result that names no delay: after the one gemini printed while retrying (recorded)",
      chunks: [stderr(fixture("limit-retry.stderr.txt")), stdout(line({ type: "result", status: "error", error: { message: "Quota exceeded for quota metric 'Requests per day'" } }))],
      exitCode: 1,
      limited: [{ message: "Quota exceeded for quota metric 'Requests per day'", resetAt: null, retryAfterMs: 37_000, resets: true }]
    }
  ],
  notLimits: [
    { name: "an ordinary API error (HTTP 400, recorded)", chunks: recordedChunks("api-400"), exitCode: 144 },
    {
      name: "the model's own text about a quota",
      chunks: [stdout(line({ type: "message", role: "assistant", content: "Quota exceeded: 429 RESOURCE_EXHAUSTED", delta: true }) + line({ type: "result", status: "success", stats: {} }))]
    }
  ],
  agentSays: (words) => [stdout(line({ type: "message", role: "assistant", content: words, delta: true }) + line({ type: "result", status: "success", stats: {} }))]
})

describe("gemini JSON output", () => {
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
    assert.match(untrustedWarning, /^gemini does not trust this folder .*--allow-all.*; trust the folder in gemini, or set GEMINI_CLI_TRUST_WORKSPACE=true$/)
  })

  it("makes a failed result after an API error a failure carrying the API's message, its stack trace not shown", () => {
    const result = recorded("api-400", 144)
    assert.deepStrictEqual(result.failed, ["fake bad request (HTTP 400)"])
    assert.include(result.display, "✗ fake bad request (HTTP 400)")
    assert.notMatch(result.display, /\n\s+at /)
    assert.include(result.display, "Error when talking to Gemini API")
    assert.notInclude(result.display, "256-color")
    assert.include(result.display, "Ripgrep is not available")
    assert.strictEqual(result.usage.length, 1)
  })

  it("makes a run that ends without a result a failure carrying gemini's last stderr line (an untrusted folder)", () => {
    const result = recorded("untrusted", 55)
    assert.strictEqual(result.failed.length, 1)
    assert.match(result.failed[0]!, new RegExp(`^${NO_RESULT}: Gemini CLI is not running in a trusted directory`))
    assert.notInclude(result.failed[0]!, "\x1b[")
    assert.deepStrictEqual(translate([]).failed, ["gemini ended without a result"])
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

describe("gemini JSON output, event by event", () => {
  const message = (content: string, role = "assistant") => line({ type: "message", role, content, delta: true })
  const use = (tool_name: string, parameters: unknown, tool_id = "t1") => line({ type: "tool_use", tool_name, tool_id, parameters })
  const success = line({ type: "result", status: "success", stats: {} })
  const run = (...lines: Array<string>) => translate([stdout(lines.join(""))])

  it("names a tool call by the first argument that says what it works on, files relative to the project", () => {
    const shown = (name: string, parameters: unknown) => run(use(name, parameters), success).display
    assert.strictEqual(shown("write_file", { file_path: `${cwd}/a.txt`, content: "x" }), "→ write_file a.txt\n")
    assert.strictEqual(shown("read_file", { absolute_path: `${cwd}/src/b.ts` }), "→ read_file src/b.ts\n")
    assert.strictEqual(shown("grep_search", { path: "/etc/hosts", pattern: "localhost" }), "→ grep_search /etc/hosts\n")
    assert.strictEqual(shown("list_directory", { dir_path: `${cwd}x/c` }), `→ list_directory ${cwd}x/c\n`)
    assert.strictEqual(shown("run_shell_command", { command: "ls -la\nrm x", description: "list" }), "→ run_shell_command ls -la\n")
    assert.strictEqual(shown("glob", { pattern: "**/*.ts" }), "→ glob **/*.ts\n")
    assert.strictEqual(shown("web_fetch", { url: "https://example.com" }), "→ web_fetch https://example.com\n")
    assert.strictEqual(shown("save_memory", { description: "remember it" }), "→ save_memory remember it\n")
    assert.strictEqual(shown("write_file", { file_path: "", path: 7, command: "echo" }), "→ write_file echo\n")
    assert.strictEqual(shown("write_todos", { todos: [] }), "→ write_todos\n")
    assert.strictEqual(shown("write_todos", "todos"), "→ write_todos\n")
    assert.strictEqual(shown("write_todos", null), "→ write_todos\n")
    assert.strictEqual(shown("run_shell_command", { command: "x".repeat(200) }), `→ run_shell_command ${"x".repeat(119)}…\n`)
  })

  it("shows a failed tool call with its error, naming the call when it was seen", () => {
    const failed = (event: object) => line({ type: "tool_result", tool_id: "t1", status: "error", ...event })
    const result = run(use("replace", { file_path: `${cwd}/a.ts` }), failed({ error: { type: "edit_no_occurrence_found", message: "No match.\nDetails" } }), success)
    assert.strictEqual(result.display, "→ replace a.ts\n✗ replace a.ts: No match.\n")
    assert.deepStrictEqual(result.warnings, [])
    assert.strictEqual(run(failed({}), success).display, "✗ tool call: failed\n")
    assert.strictEqual(run(use("ls", {}), line({ type: "tool_result", tool_id: "t1", status: "success" }), success).display, "→ ls\n")
  })

  it("warns once when a policy denied tool calls", () => {
    const denied = (id: string) => line({ type: "tool_result", tool_id: id, status: "error", error: { type: "policy_violation", message: "denied by policy" } })
    const result = run(use("run_shell_command", { command: "rm -rf x" }), denied("t1"), use("write_file", { file_path: "b" }, "t2"), denied("t2"), success)
    assert.deepStrictEqual(result.warnings, [
      "gemini did not run a tool call that needs approval (run_shell_command rm -rf x): without approval it offers the model only " +
      "the tools that need none, so the agent could not do it; rerun with --allow-all to approve the agent's tool calls"
    ])
  })

  it("ends the model's text with a newline before a tool call, an error, the result or the end of the run", () => {
    assert.strictEqual(run(message("Hi"), use("ls", {})).agentText, "Hi\n")
    assert.strictEqual(run(message("Hi"), line({ type: "error", severity: "warning", message: "Loop detected" })).agentText, "Hi\n")
    assert.strictEqual(run(message("Hi"), success).agentText, "Hi\n")
    assert.strictEqual(translate([stdout(message("Hi"))]).agentText, "Hi\n")
    assert.strictEqual(run(message("Hi\n"), use("ls", {}), success).agentText, "Hi\n")
    assert.strictEqual(run(message("Hi"), message(""), message(" there\n"), success).agentText, "Hi there\n")
  })

  it("shows spool's own lines on a line of their own after the model's text, and never the prompt", () => {
    assert.strictEqual(run(message("do it\n", "user"), message("Hi"), use("ls", {}), message("Done."), success).display, "Hi\n→ ls\nDone.")
    assert.strictEqual(run(message("Hi\n"), use("ls", {})).display, "Hi\n→ ls\n")
    assert.strictEqual(run(message("Hi\n"), message(""), use("ls", {})).display, "Hi\n→ ls\n")
    assert.strictEqual(run(message("do it", "user"), use("ls", {})).display, "→ ls\n")
    assert.strictEqual(run("Loaded cached credentials.\n", message("Hi"), "plain\n", success).display, "Loaded cached credentials.\nHi\nplain\n")
  })

  it("shows gemini's warnings and errors, the last error being the failure of a result without a message", () => {
    const result = run(
      message("Hi"),
      line({ type: "error", severity: "warning", message: "Loop detected, stopping execution" }),
      line({ type: "error", message: "Model stream ended with empty response.\nMore" }),
      line({ type: "result", status: "error", stats: {} })
    )
    assert.strictEqual(result.display, "Hi\n! gemini: Loop detected, stopping execution\n✗ gemini: Model stream ended with empty response.\n✗ Model stream ended with empty response.\n")
    assert.deepStrictEqual(result.failed, ["Model stream ended with empty response."])
    assert.deepStrictEqual(result.limited, [])
    assert.deepStrictEqual(run(line({ type: "result", status: "error", stats: {} })).failed, ["gemini reported an error (error)"])
    assert.deepStrictEqual(run(line({ type: "result", status: "error", error: { type: "invalid_stream", message: "" } })).failed, ["gemini reported an error (invalid_stream)"])
    assert.deepStrictEqual(run(line({ type: "result", status: "error", error: { message: "[API Error: boom]\n    at x" } })).failed, ["boom"])
    assert.deepStrictEqual(run(line({ type: "result", status: "error", error: { message: "[API Error: {\"error\":{\"message\":\"no code\"}}]" } })).failed, ["no code"])
    // Only gemini's own wrapping, around the whole first line, is taken off.
    const failed = (message: string) => run(line({ type: "result", status: "error", error: { message } })).failed
    assert.deepStrictEqual(failed("Error: [API Error: x]"), ["Error: [API Error: x]"])
    assert.deepStrictEqual(failed("[API Error: x] y"), ["[API Error: x] y"])
    assert.deepStrictEqual(failed("[API Error: a]\nb]"), ["a"])
    assert.deepStrictEqual(failed("[API Error: a]\n\tb"), ["a"])
  })

  it("counts tokens apart and never below zero", () => {
    const stats = (stats: object) => run(line({ type: "result", status: "success", stats })).usage
    assert.deepStrictEqual(stats({ total_tokens: 100, input_tokens: 60, output_tokens: 30, cached: 10 }), [
      { inputTokens: 50, outputTokens: 30, reasoningTokens: 10, cacheReadTokens: 10, cacheWriteTokens: 0, cost: null }
    ])
    assert.deepStrictEqual(stats({ total_tokens: 50, input_tokens: 60, output_tokens: 30, cached: 70 }), [
      { inputTokens: 0, outputTokens: 30, reasoningTokens: 0, cacheReadTokens: 70, cacheWriteTokens: 0, cost: null }
    ])
  })

  it("hides stack frames, blank lines and the terminal notice on stderr, and shows the rest", () => {
    const hidden = ["    at throwErrorIfNotOK (file:///x.js:1:2)", "  }", "{", "    status: 429", "   ", "\x1b[33mWarning: 256-color support not detected.\x1b[0m"]
    const shown = [
      "at the end of the road",
      "Looking at the logs",
      "    at",
      "  } else",
      "x {",
      "{sandbox}",
      "    status: ok",
      "status: 429",
      "HTTP status: 429",
      "  status: 429 Too Many Requests",
      "    status: 429.",
      "Note: Warning: 256-color support not detected"
    ]
    const result = translate([stderr([...hidden, ...shown].map((text) => `${text}\n`).join(""))])
    assert.strictEqual(result.display, shown.map((text) => `${text}\n`).join(""))
    assert.deepStrictEqual(result.failed, [`${NO_RESULT}: Note: Warning: 256-color support not detected`])
  })

  it("keeps the retry delay gemini last printed on stderr for a limit whose message names none", () => {
    const limited = (...lines: Array<string>) =>
      translate([stderr(lines.map((text) => `${text}\n`).join("")), stdout(line({ type: "result", status: "error", error: { message: "Quota exceeded" } }))]).limited
    assert.deepStrictEqual(limited("Suggested retry after 12s.. Retrying after 13000ms...").map((l) => l.retryAfterMs), [12_000])
    assert.deepStrictEqual(limited("Attempt 1 failed: Quota exceeded. Please retry in 7s.", "Attempt 2 failed with status 429").map((l) => l.retryAfterMs), [7_000])
    assert.deepStrictEqual(limited("Attempt 1 failed: socket hang up. Please retry in 7s.").map((l) => l.retryAfterMs), [null])
    assert.deepStrictEqual(limited("Note: Suggested retry after 12s.").map((l) => l.retryAfterMs), [null])
    assert.deepStrictEqual(limited().map((l) => [l.message, l.resetAt, l.retryAfterMs, l.resets]), [["Quota exceeded", null, null, true]])
  })

  it("reads a multi-MiB error line in bounded form, its strings cut to their first KiB", () => {
    const huge = line({ type: "error", message: "错".repeat(100_000) })
    const result = run(huge, line({ type: "result", status: "error", stats: {} }))
    assert.strictEqual(result.failed.length, 1)
    assert.isAtMost(new TextEncoder().encode(result.failed[0]!).length, 1024)
    assert.match(result.failed[0]!, /^错+$/)
  })

  it("reads a long line of the model's text whole, and drops a line longer than it may keep", () => {
    const text = `${"word ".repeat(20_000)}<promise>COMPLETE</promise>`
    const spaced = `{ "type" : "message", "role": "assistant", "content": ${JSON.stringify(text)} }\n`
    // In pieces, as a pipe gives it: its first bytes decide that it is kept whole.
    assert.strictEqual(translate(inBatches(spaced + success, 4096)).agentText, `${text}\n`)
    assert.strictEqual(translate(inBatches(message(text) + success, 4096)).agentText, `${text}\n`)
    const output = makeGeminiOutput({ cwd, maxLineLength: 100 })
    const dropped = sortEvents([stdout(message("x".repeat(200))), exited()].flatMap(output.feed))
    assert.strictEqual(dropped.agentText, "")
    assert.match(dropped.display, /gemini printed a \d+-byte line on stdout; it is only in the log/)
  })
})
