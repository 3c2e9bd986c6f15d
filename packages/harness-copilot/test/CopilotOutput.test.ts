import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, judgeCompletion, outputOf } from "@spool/core"
import { limitConformance, outputConformance } from "@spool/testkit/harnessConformance"
import { inBatches, sortEvents } from "@spool/testkit/harnessEvents"
import { readFileSync } from "node:fs"
import { deniedWarning, makeCopilotOutput } from "../src/CopilotOutput.js"

// Fixtures are the real output of Copilot CLI 1.0.102 (`copilot --output-format json --no-auto-update
// --model copilot-test-model [--allow-all] --usage-output-file <file>`, the prompt on stdin) against
// the fake OpenAI-compatible server of @spool/testkit, run in /tmp/spool-copilot/work. The `.log.txt`
// files are its logs (`--log-dir`) of a 429 with a retry-after of an hour, and of 20 seconds.
const cwd = "/tmp/spool-copilot/work"
const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8")
const stdout = (text: string) => outputOf("stdout", text)
const stderr = (text: string) => outputOf("stderr", text)
const exited = (exitCode: number | null = 0, signal: string | null = null) => HarnessEvent.Exited({ exitCode, signal })
const line = (event: object) => `${JSON.stringify(event)}\n`
const ended = (exitCode = 0) => line({ type: "result", exitCode, usage: { premiumRequests: 0 } })

/** Feeds the chunks, then `Exited`, and sorts what came out. */
const translate = (chunks: ReadonlyArray<HarnessEvent>, end: HarnessEvent = exited()) => {
  const output = makeCopilotOutput({ cwd })
  return sortEvents([...chunks, end].flatMap(output.feed))
}

/** A recorded run's stdout, fed in chunks of `size` bytes. */
const recorded = (name: string, exitCode = 0, size = 89) => translate(inBatches(fixture(`${name}.stdout.jsonl`), size), exited(exitCode))

const message = (content: string, agentId?: string) =>
  line({ type: "assistant.message", data: { content, toolRequests: [], ...(agentId === undefined ? {} : { agentId }) }, id: "m", timestamp: "t" })
const sessionError = (errorType: string, text: string, statusCode?: number) =>
  line({ type: "session.error", data: { errorType, message: text, ...(statusCode === undefined ? {} : { statusCode }) } })
const callFailure = (statusCode: number, body: string, errorType = "rate_limit_error") =>
  line({ type: "model.call_failure", data: { statusCode, errorMessage: body, errorType, retryAttempt: 0 }, ephemeral: true })

outputConformance({ agent: "copilot", makeOutput: () => makeCopilotOutput({ cwd }), chunks: [stdout(fixture("write-allow-all.stdout.jsonl")), stderr("a warning\n")] })

limitConformance({
  agent: "copilot",
  makeOutput: () => makeCopilotOutput({ cwd }),
  now: Date.UTC(2026, 10, 29, 9, 0),
  limits: [
    {
      name: "a 429 with a retry-after of an hour (recorded): copilot fails the run at once, and prints no retry-after",
      chunks: inBatches(fixture("limit-429.stdout.jsonl"), 89),
      exitCode: 1,
      limited: [{ message: "429 Rate limit reached for requests", resetAt: null, retryAfterMs: null, resets: true }],
      failed: ["429 Rate limit reached for requests"],
      shown: ["! copilot: a model request failed: 429 Rate limit reached for requests", "✗ copilot: 429 Rate limit reached for requests"]
    },
    {
      name: "a 429 copilot retries five times (recorded): read at its first failure, while copilot retries",
      chunks: inBatches(fixture("limit-retry.stdout.jsonl"), 89),
      exitCode: 1,
      limited: [{ message: "429 Rate limit reached for requests", resetAt: null, retryAfterMs: null, resets: true }],
      shown: ["… copilot retries the model request (rate_limit)"]
    },
    {
      name: "a spent quota (`insufficient_quota`, recorded): it does not reset by waiting",
      chunks: inBatches(fixture("limit-quota.stdout.jsonl"), 89),
      exitCode: 1,
      limited: [{ message: "429 You exceeded your current quota, please check your plan and billing details.", resetAt: null, retryAfterMs: null, resets: false }]
    },
    {
      // The words and codes of GitHub's own limits, as they are in copilot's bundle: no such run was recorded.
      name: "GitHub's weekly rate limit, with the time it resets",
      chunks: [stdout(sessionError("rate_limit", "You've reached your weekly rate limit. Your limit resets 2026-11-30T10:00:00Z.", 429) + ended(1))],
      exitCode: 1,
      limited: [{
        message: "You've reached your weekly rate limit. Your limit resets 2026-11-30T10:00:00Z.",
        resetAt: Date.UTC(2026, 10, 30, 10, 0),
        retryAfterMs: null,
        resets: true
      }]
    },
    {
      name: "GitHub's rate limit of a model, with how long it lasts",
      chunks: [stdout(callFailure(429, JSON.stringify({ error: { message: "You've hit the rate limit for this model. (current limit resets in ~5m)", code: "user_model_rate_limited" } })))],
      limited: [{ message: "429 You've hit the rate limit for this model. (current limit resets in ~5m)", resetAt: null, retryAfterMs: 300_000, resets: true }]
    },
    {
      name: "Copilot's monthly AI credits spent (`quota_exhausted`)",
      chunks: [stdout(sessionError("quota_exhausted", "You've run out of your included AI credits for the month. Manage budget: https://github.com/settings/copilot/features") + ended(1))],
      exitCode: 1,
      limited: [{
        message: "You've run out of your included AI credits for the month. Manage budget: https://github.com/settings/copilot/features",
        resetAt: null,
        retryAfterMs: null,
        resets: false
      }]
    },
    {
      name: "Copilot's premium requests spent (HTTP 402)",
      chunks: [stdout(callFailure(402, JSON.stringify({ error: { message: "No remaining quota for premium requests", code: "quota_exceeded" } }), "quota_exceeded"))],
      limited: [{ message: "402 No remaining quota for premium requests", resetAt: null, retryAfterMs: null, resets: false }]
    }
  ],
  notLimits: [
    { name: "a failed model request that is no limit (HTTP 400, recorded)", chunks: inBatches(fixture("api-400.stdout.jsonl"), 89), exitCode: 1, failed: ["400 bad request: context too long"] },
    { name: "a server error copilot retries", chunks: [stdout(callFailure(503, `{"message":"rate limit of the upstream"}`, "server_error") + message("Done.") + ended())], failed: [] },
    { name: "the model's own text in a limit's words", chunks: [stdout(message("429 rate limit: quota exceeded, retry after 5s") + ended())], failed: [] }
  ],
  agentSays: (words) => [stdout(message(words) + ended())]
})

describe("copilot JSON output", () => {
  it("takes each finished message of the main agent as agent text on a line of its own, never the prompt or a tool's input", () => {
    const run = recorded("write-allow-all")
    assert.strictEqual(run.agentText, "Writing greeting.txt.\nThe file is written.\n\n<promise>COMPLETE</promise>\n")
    assert.isTrue(judgeCompletion(run.agentText, { token: "COMPLETE", prompt: "" }).claimed)
    assert.notInclude(run.agentText, "Do the task.")
    assert.notInclude(run.agentText, "hello from copilot")
    assert.strictEqual(run.display, "Writing greeting.txt.\n→ create greeting.txt\nThe file is written.\n\n<promise>COMPLETE</promise>\n")
    assert.deepStrictEqual(run.failed, [])
    assert.deepStrictEqual(run.warnings, [])
    assert.deepStrictEqual(run.usage, [])
  })

  it("warns once, with the hint to --allow-all, when copilot denies a call for want of approval, and goes on", () => {
    const run = recorded("write-default")
    assert.include(run.display, "→ create denied.txt\n✗ create denied.txt: Permission denied because no interactive user response was available.")
    assert.deepStrictEqual(run.warnings, [
      "copilot denied a tool call that needs approval (create denied.txt): with no one to ask, it approves none, so the agent " +
      "could not do it; rerun with --allow-all to approve the agent's tool calls"
    ])
    assert.strictEqual(run.agentText, "Writing denied.txt.\nI could not write it.\n")
    assert.deepStrictEqual(run.failed, [])
  })

  it("shows a shell command that exited non-zero with its exit code", () => {
    const run = recorded("bash-fail")
    assert.include(run.display, "→ bash exit 3\n✗ bash exit 3: exit code 3\n")
    assert.deepStrictEqual(run.warnings, [])
  })

  it("makes a failed run carry copilot's error, shown as it comes", () => {
    const run = recorded("api-400", 1)
    assert.deepStrictEqual(run.failed, ["400 bad request: context too long"])
    assert.include(run.display, "! copilot: a model request failed: 400 {\"message\":\"bad request: context too long\",\"type\":\"invalid_request_error\"}\n")
    assert.include(run.display, "✗ copilot: 400 bad request: context too long\n")
    assert.deepStrictEqual(run.limited, [])
  })

  it("makes a run that ends before its result a failure, with copilot's last stderr line", () => {
    assert.deepStrictEqual(translate([stdout(message("Half"))], exited(null, "SIGKILL")).failed, ["copilot ended without its result"])
    assert.deepStrictEqual(translate([stderr("\x1b[31mError: No model configured\x1b[0m\n  \n")], exited(1)).failed, [
      "copilot ended without its result: Error: No model configured"
    ])
    assert.deepStrictEqual(translate([stdout(message("Done.") + ended())]).failed, [])
  })

  it("reads the usage file: the run's tokens over every model, cached and reasoning ones apart, no cost", () => {
    const output = makeCopilotOutput({ cwd })
    // Two requests of 100 prompt tokens (30 cached) and 20 completion tokens (5 reasoning).
    assert.deepStrictEqual(output.report(fixture("write.usage.json")), [
      HarnessEvent.Usage({ usage: { inputTokens: 140, outputTokens: 30, reasoningTokens: 10, cacheReadTokens: 60, cacheWriteTokens: 0, cost: null } })
    ])
    const models = JSON.stringify({
      modelMetrics: {
        a: { usage: { inputTokens: 50, outputTokens: 9, cacheReadTokens: 10, cacheWriteTokens: 5, reasoningTokens: 4 } },
        b: { usage: { inputTokens: 7, outputTokens: 3 } }
      }
    })
    assert.deepStrictEqual(output.report(models), [
      HarnessEvent.Usage({ usage: { inputTokens: 42, outputTokens: 8, reasoningTokens: 4, cacheReadTokens: 10, cacheWriteTokens: 5, cost: null } })
    ])
    // No model request succeeded, no file, or not one copilot writes: no usage at all.
    assert.deepStrictEqual(output.report(fixture("no-request.usage.json")), [])
    assert.deepStrictEqual(output.report(null), [])
    assert.deepStrictEqual(output.report("{ half"), [])
  })
})

describe("the limit that ended copilot's run, completed from its log", () => {
  const limited = HarnessEvent.Limited({ message: "429 Rate limit reached for requests", resetAt: null, retryAfterMs: null, resets: true })

  it("takes the retry-after copilot logged and printed nowhere", () => {
    const output = makeCopilotOutput({ cwd })
    assert.deepStrictEqual(output.limit(limited, fixture("limit-429.log.txt")), HarnessEvent.Limited({ ...limited, retryAfterMs: 3_600_000 }))
    // Six failures of the same request, each logged: the last one's.
    assert.deepStrictEqual(output.limit(limited, fixture("limit-retry-20s.log.txt")), HarnessEvent.Limited({ ...limited, retryAfterMs: 20_000 }))
  })

  it("keeps the limit as its words read it when the log names no retry-after, or there is no log", () => {
    const output = makeCopilotOutput({ cwd })
    const spent = HarnessEvent.Limited({ ...limited, retryAfterMs: 90_000, resets: false })
    assert.deepStrictEqual(output.limit(spent, null), spent)
    assert.deepStrictEqual(output.limit(spent, fixture("limit-429.log.txt").replace(/,"retry_after_ms":\d+/, "")), spent)
    // A retry-after says the limit lifts by waiting, whatever the words made of it.
    assert.deepStrictEqual(output.limit(spent, fixture("limit-429.log.txt")), HarnessEvent.Limited({ ...spent, retryAfterMs: 3_600_000, resets: true }))
  })
})

describe("copilot JSON output, event by event", () => {
  const start = (toolName: string, args: unknown, toolCallId = "t1", agentId?: string) =>
    line({ type: "tool.execution_start", data: { toolCallId, toolName, arguments: args, ...(agentId === undefined ? {} : { agentId }) } })
  const complete = (data: object, toolCallId = "t1") => line({ type: "tool.execution_complete", data: { toolCallId, ...data } })
  const run = (...lines: Array<string>) => translate([stdout([...lines, ended()].join(""))])

  it("names a tool call by the first argument that says what it works on, files relative to the project", () => {
    const shown = (name: string, args: unknown) => run(start(name, args)).display
    assert.strictEqual(shown("create", { path: `${cwd}/a.txt`, file_text: "x" }), "→ create a.txt\n")
    assert.strictEqual(shown("edit", { path: `${cwd}/src/b.ts`, old_str: "a" }), "→ edit src/b.ts\n")
    assert.strictEqual(shown("view", { path: `${cwd}x/c` }), `→ view ${cwd}x/c\n`)
    assert.strictEqual(shown("bash", { command: "ls -la\nrm x", description: "Lists." }), "→ bash ls -la\n")
    assert.strictEqual(shown("grep", { pattern: "TODO" }), "→ grep TODO\n")
    assert.strictEqual(shown("web_fetch", { url: "https://example.com" }), "→ web_fetch https://example.com\n")
    assert.strictEqual(shown("task", { description: "Explore the code", prompt: "..." }), "→ task Explore the code\n")
    // An MCP server's tools name theirs as they like.
    assert.strictEqual(shown("github-mcp-server-search_code", { query: "makeJsonOutput repo:spool" }), "→ github-mcp-server-search_code makeJsonOutput repo:spool\n")
    assert.strictEqual(shown("ide-get_diagnostics", { file_path: `${cwd}/src/a.ts` }), "→ ide-get_diagnostics src/a.ts\n")
    assert.strictEqual(shown("create", { path: "", file_path: 7, command: "echo" }), "→ create echo\n")
    assert.strictEqual(shown("list_agents", {}), "→ list_agents\n")
    assert.strictEqual(shown("list_agents", null), "→ list_agents\n")
    assert.strictEqual(shown("bash", { command: "x".repeat(200) }), `→ bash ${"x".repeat(119)}…\n`)
  })

  it("shows a failed tool call with the first line of its error, naming the call when it was seen", () => {
    const failed = (error: unknown, toolCallId = "t1") => complete({ success: false, ...(error === undefined ? {} : { error }) }, toolCallId)
    assert.strictEqual(run(start("view", { path: `${cwd}/x` }), failed({ message: "no such file\nmore", code: "failure" })).display, "→ view x\n✗ view x: no such file\n")
    assert.strictEqual(run(failed({ message: "gone" }, "t9")).display, "✗ tool call: gone\n")
    assert.strictEqual(run(failed(undefined)).display, "✗ tool call: failed\n")
    assert.strictEqual(run(start("bash", { command: "true" }), complete({ success: true, shellExecution: { exitCode: 0 } })).display, "→ bash true\n")
    assert.deepStrictEqual(run(failed({ message: "no", code: "failure" })).warnings, [])
  })

  it("warns of denied calls once a run, naming the first", () => {
    const denied = (toolCallId: string) => complete({ success: false, error: { message: "Permission denied", code: "denied" } }, toolCallId)
    const result = run(start("create", { path: `${cwd}/a` }, "t1"), denied("t1"), start("bash", { command: "ls" }, "t2"), denied("t2"))
    assert.deepStrictEqual(result.warnings, [deniedWarning("create a")])
    assert.deepStrictEqual(run(denied("t7")).warnings, [deniedWarning("a tool call")])
  })

  it("takes only the main agent's messages as its text, a sub-agent's calls indented", () => {
    const result = run(message("Delegating."), start("view", { path: `${cwd}/a` }, "s1", "agent-1"), message("<promise>COMPLETE</promise>", "agent-1"),
      complete({ success: false, agentId: "agent-1", error: { message: "nope" } }, "s1"), message("  \n"), message("Done\n"))
    assert.strictEqual(result.agentText, "Delegating.\nDone\n")
    assert.strictEqual(result.display, "Delegating.\n  → view a\n  ✗ view a: nope\nDone\n")
    const nested = line({ type: "assistant.message", agentId: "agent-2", data: { content: "<promise>COMPLETE</promise>" } })
    assert.strictEqual(run(nested).agentText, "")
  })

  it("reads one limit a run, the first, and shows copilot's retries and warnings", () => {
    const limit = callFailure(429, `{"message":"slow down"}`)
    const result = run(limit, line({ type: "assistant.turn_retry", data: { reason: "rate_limit" } }), limit,
      line({ type: "assistant.turn_retry", data: {} }), sessionError("rate_limit", "Failed to get response from the AI model; retried 5 times", 429),
      line({ type: "session.warning", data: { message: "You have used 90% of your premium requests.\nMore." } }))
    assert.deepStrictEqual(result.limited.map((l) => l.message), ["429 slow down"])
    assert.deepStrictEqual(result.failed, ["Failed to get response from the AI model; retried 5 times"])
    assert.include(result.display, "… copilot retries the model request (rate_limit)\n")
    assert.include(result.display, "… copilot retries the model request\n")
    assert.include(result.display, "! copilot: You have used 90% of your premium requests.\n")
    // A request that failed before any answer has no status: its words alone.
    assert.include(run(line({ type: "model.call_failure", data: { errorType: "network", errorMessage: "fetch failed" } })).display,
      "! copilot: a model request failed: fetch failed\n")
    // A run's error of no type copilot names is still its failure.
    assert.deepStrictEqual(run(sessionError("", "")).failed, ["copilot reported an error ()"])
  })

  it("skips streamed deltas unread, and reads a multi-MiB tool result line in bounded form", () => {
    const delta = line({ type: "assistant.message_delta", data: { deltaContent: "<promise>COMPLETE</promise>" } })
    const big = complete({ success: true, result: { content: "<promise>COMPLETE</promise>".repeat(100_000) } })
    const result = translate([stdout(delta + start("view", { path: `${cwd}/big.txt` }) + big + message("Done.") + ended())])
    assert.strictEqual(result.agentText, "Done.\n")
    assert.strictEqual(result.display, "→ view big.txt\nDone.\n")
  })

  it("shows stderr lines without their colours, and shows non-JSON stdout lines", () => {
    const shown = translate([stderr("\x1b[33m  Warning: slow\x1b[0m  \n   \n"), stdout(`Booting\n${ended()}`)])
    assert.strictEqual(shown.display, "Warning: slow\nBooting\n")
  })

  it("reads a long finished message whole, and drops a line longer than it may keep", () => {
    const text = `${"word ".repeat(20_000)}<promise>COMPLETE</promise>`
    const spaced = ` { "type" : "assistant.message", "data": { "content": ${JSON.stringify(text)} } }\n`
    // In pieces, as a pipe gives it: its first bytes decide that it is kept whole.
    assert.strictEqual(translate(inBatches(spaced + ended(), 4096)).agentText, `${text}\n`)
    assert.strictEqual(translate(inBatches(message(text) + ended(), 4096)).agentText, `${text}\n`)
    const output = makeCopilotOutput({ cwd, maxLineLength: 100 })
    const dropped = sortEvents([stdout(message("x".repeat(200))), exited()].flatMap(output.feed))
    assert.strictEqual(dropped.agentText, "")
    assert.match(dropped.display, /copilot printed a \d+-byte line on stdout; it is only in the log/)
  })
})
