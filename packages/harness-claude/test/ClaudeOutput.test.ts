import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, judgeCompletion, outputOf } from "@spool/core"
import { ClaudeOutput } from "../src/index.js"

// Lines shaped like those claude 2.1 prints (trimmed of fields spool does not read).
const CWD = "/repo"
const PROMISE = "<promise>COMPLETE</promise>"
const NOW = Date.UTC(2026, 0, 15, 10, 0, 0)

const line = (value: object) => `${JSON.stringify(value)}\n`
const init = line({ type: "system", subtype: "init", cwd: CWD, session_id: "s", tools: ["Write"], model: "m" })
const assistant = (content: Array<object>, parent: string | null = null, extra: object = {}) =>
  line({ type: "assistant", message: { id: "msg_1", role: "assistant", content, usage: { input_tokens: 1, output_tokens: 1 } }, parent_tool_use_id: parent, session_id: "s", ...extra })
const text = (t: string) => ({ type: "text", text: t })
const toolUse = (id: string, name: string, input: object) => ({ type: "tool_use", id, name, input })
const toolResult = (id: string, content: string, isError = false, parent: string | null = null, extra: object = {}) =>
  line({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }] }, parent_tool_use_id: parent, ...extra })
const result = (fields: object = {}) =>
  line({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "Done.",
    total_cost_usd: 0.0125,
    usage: { input_tokens: 200, output_tokens: 40, cache_creation_input_tokens: 20, cache_read_input_tokens: 60, output_tokens_details: { thinking_tokens: 15 } },
    num_turns: 2,
    permission_denials: [],
    api_error_status: null,
    terminal_reason: "completed",
    ...fields
  })
const apiError = (message: string, status: number) =>
  assistant([text(message)], null, { is_api_error_message: true, api_error_status: status, error: "unknown" })

/** Feeds stdout (in chunks of `chunk` characters) and stderr, then the exit; returns the events by kind. */
const run = (stdout: string, options: { stderr?: string; exitCode?: number; chunk?: number; maxLineLength?: number } = {}) => {
  const output = ClaudeOutput.makeClaudeOutput({ cwd: CWD, now: () => NOW, ...(options.maxLineLength ? { maxLineLength: options.maxLineLength } : {}) })
  const events: Array<HarnessEvent> = []
  const size = options.chunk ?? stdout.length
  for (let i = 0; i < stdout.length; i += size) {
    events.push(...output.feed(outputOf("stdout", stdout.slice(i, i + size))))
  }
  if (options.stderr !== undefined) events.push(...output.feed(outputOf("stderr", options.stderr)))
  events.push(...output.feed(HarnessEvent.Exited({ exitCode: options.exitCode ?? 0, signal: null })))
  const of = <K extends HarnessEvent["_tag"]>(tag: K) => events.filter((e): e is Extract<HarnessEvent, { _tag: K }> => e._tag === tag)
  return {
    events,
    output: of("Output").map((e) => new TextDecoder().decode(e.bytes)).join(""),
    display: of("Display").map((e) => e.text).join(""),
    agentText: of("AgentText").map((e) => e.text).join(""),
    usage: of("Usage").map((e) => e.usage),
    warnings: of("Warning").map((e) => e.message),
    failed: of("Failed").map((e) => e.message),
    limited: of("Limited")
  }
}

describe("ClaudeOutput: the agent's text", () => {
  it("each top-level assistant message is AgentText ending with a newline, so a promise opens its own line", () => {
    const r = run(init + assistant([text("First part")]) + assistant([text(PROMISE)]) + result({ result: PROMISE }), { chunk: 7 })
    assert.strictEqual(r.agentText, `First part\n${PROMISE}\n`)
    assert.isTrue(judgeCompletion(r.agentText, { token: "COMPLETE", prompt: "" }).claimed)
    assert.include(r.display, `First part\n${PROMISE}\n`)
  })

  it("tool input, tool results and the result's echo are never AgentText, even when they hold the promise", () => {
    const content = `notes\n${PROMISE}\n`
    const r = run(
      init +
        assistant([text("Writing."), toolUse("t1", "Write", { file_path: `${CWD}/notes.md`, content })]) +
        toolResult("t1", "File created successfully", false, null, { tool_use_result: { type: "create", content } }) +
        assistant([text("Nothing more.")]) +
        result({ result: PROMISE })
    )
    assert.strictEqual(r.agentText, "Writing.\nNothing more.\n")
    assert.isFalse(judgeCompletion(r.agentText, { token: "COMPLETE", prompt: "" }).claimed)
    assert.include(r.display, "→ Write notes.md\n")
    assert.notInclude(r.display, PROMISE)
    assert.include(r.output, PROMISE)
  })

  it("a sub-agent's text is not AgentText; its tool calls are shown indented", () => {
    const r = run(
      init +
        assistant([toolUse("task1", "Task", { description: "explore the code", prompt: "look" })]) +
        assistant([text(PROMISE), toolUse("g1", "Grep", { pattern: "TODO" })], "task1") +
        toolResult("g1", "no matches", true, "task1") +
        toolResult("task1", PROMISE) +
        assistant([text("Explored.")]) +
        result({ result: "Explored." })
    )
    assert.strictEqual(r.agentText, "Explored.\n")
    assert.include(r.display, "→ Task explore the code\n")
    assert.include(r.display, "  → Grep TODO\n")
    assert.include(r.display, "  ✗ Grep TODO: no matches\n")
  })

  it("thinking and unknown content blocks are skipped without losing the text beside them", () => {
    const r = run(init + assistant([{ type: "thinking", thinking: PROMISE }, { type: "image" }, text("Visible.")]) + result())
    assert.strictEqual(r.agentText, "Visible.\n")
  })

  it("non-JSON stdout, stderr lines and retries are shown, never AgentText", () => {
    const r = run(
      `not json ${PROMISE}\n` + init +
        line({ type: "system", subtype: "api_retry", attempt: 1, max_retries: 10, retry_delay_ms: 500, error_status: 500, error: "server_error" }) +
        result(),
      { stderr: `[claude-code:unrecognized_model] {"model":"x"}\n` }
    )
    assert.strictEqual(r.agentText, "")
    assert.include(r.display, `not json ${PROMISE}\n`)
    assert.include(r.display, "… claude retries a failed model request (500, attempt 1/10)\n")
    assert.include(r.display, "[claude-code:unrecognized_model]")
  })

  it("a line longer than the limit is only noted, and the lines after it still count", () => {
    const r = run(assistant([text("x".repeat(500))]) + assistant([text("Short.")]) + result(), { maxLineLength: 300, chunk: 64 })
    assert.strictEqual(r.agentText, "Short.\n")
    assert.match(r.display, /claude printed a \d+-byte line on stdout; it is only in the log/)
  })
})

describe("ClaudeOutput: usage, permissions and failures", () => {
  it("reports the run's totals from the result once, thinking apart from the other output tokens", () => {
    const r = run(init + assistant([text("Hi.")]) + result())
    assert.deepStrictEqual(r.usage, [{ inputTokens: 200, outputTokens: 25, reasoningTokens: 15, cacheReadTokens: 60, cacheWriteTokens: 20, cost: 0.0125 }])
    assert.deepStrictEqual(r.failed, [])
  })

  it("cost is null when the result does not report it", () => {
    const r = run(result({ total_cost_usd: undefined, usage: undefined }))
    assert.deepStrictEqual(r.usage, [{ inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: null }])
  })

  it("a denied permission is shown and warned about once, with the --allow-all hint", () => {
    const r = run(
      init +
        assistant([toolUse("t1", "Bash", { command: "rm -rf build" })]) +
        line({ type: "system", subtype: "permission_denied", tool_name: "Bash", tool_use_id: "t1", message: "Claude requested permissions to use Bash, but you haven't granted it yet." }) +
        toolResult("t1", "Claude requested permissions to use Bash, but you haven't granted it yet.", true) +
        result({ permission_denials: [{ tool_name: "Bash", tool_use_id: "t1", tool_input: { command: "rm -rf build" } }] })
    )
    assert.deepStrictEqual(r.warnings, [ClaudeOutput.permissionWarning("Bash rm -rf build")])
    assert.include(r.warnings[0], "--allow-all")
    assert.strictEqual(r.display.split("✗ Bash rm -rf build: permission denied\n").length, 2)
    assert.notInclude(r.display, "haven't granted")
  })

  it("denials listed only in the result are warned about too", () => {
    const r = run(result({ permission_denials: [{ tool_name: "Write", tool_input: { file_path: `${CWD}/a.txt` } }] }))
    assert.deepStrictEqual(r.warnings, [ClaudeOutput.permissionWarning("Write a.txt")])
  })

  it("an is_error result is Failed with the API error text, even when its subtype says success", () => {
    const message = "API Error: 400 prompt is too long"
    const r = run(init + apiError(message, 400) + result({ is_error: true, result: message, api_error_status: 400, terminal_reason: "api_error" }), { exitCode: 1 })
    assert.deepStrictEqual(r.failed, [message])
    assert.strictEqual(r.agentText, "")
    assert.strictEqual(r.display.split(`✗ ${message}\n`).length, 2)
    assert.deepStrictEqual(r.limited, [])
    assert.strictEqual(r.events.at(-1)?._tag, "Exited")
  })

  it("an is_error result without text takes the API error message, then its errors, then its subtype", () => {
    assert.deepStrictEqual(run(apiError("API Error: 500 boom", 500) + result({ is_error: true, result: "" })).failed, ["API Error: 500 boom"])
    assert.deepStrictEqual(run(result({ is_error: true, result: undefined, subtype: "error_during_execution", errors: ["tool crashed"] })).failed, ["tool crashed"])
    assert.deepStrictEqual(run(result({ is_error: true, result: undefined, subtype: "error_max_turns" })).failed, ["claude reported an error (error_max_turns)"])
  })

  it("a run that exits without a result is Failed, with its last stderr line", () => {
    assert.deepStrictEqual(run(init + assistant([text("Half")]), { exitCode: 143 }).failed, [ClaudeOutput.NO_RESULT])
    const refused = run("", { stderr: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n", exitCode: 1 })
    assert.strictEqual(refused.failed.length, 1)
    assert.match(refused.failed[0]!, /^claude ended without a result: --dangerously-skip-permissions cannot be used with root\/sudo privileges/)
    assert.include(refused.failed[0], "set IS_SANDBOX=1 if this machine is a sandbox, or run as a non-root user")
  })
})

describe("ClaudeOutput: usage limits, from claude's error channels only", () => {
  const failedWith = (message: string, status: number | null) =>
    run(apiError(message, status ?? 0) + result({ is_error: true, result: message, api_error_status: status }), { exitCode: 1 })

  it("a rejected rate_limit_event (resetsAt in seconds) is Limited at that time", () => {
    const r = run(line({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt: 1768500000, rateLimitType: "five_hour" } }))
    assert.deepStrictEqual(r.limited.map(({ _tag, ...limit }) => limit), [{
      message: "claude hit a usage limit (five_hour); it resets at 2026-01-15T18:00:00.000Z",
      resetAt: 1768500000000,
      retryAfterMs: null,
      resets: true
    }])
  })

  it("a rate_limit_event with its fields at the top and resetsAt in milliseconds is read too", () => {
    const r = run(line({ type: "rate_limit_event", status: "rejected", resetsAt: 1768500000000 }))
    assert.strictEqual(r.limited[0]?.resetAt, 1768500000000)
  })

  it("rate_limit_events that only report the state (allowed, allowed_warning) are not limits", () => {
    const r = run(
      line({ type: "rate_limit_event", rate_limit_info: { status: "allowed", resetsAt: 1768500000 } }) +
        line({ type: "rate_limit_event", rate_limit_info: { status: "allowed_warning", utilization: 0.9 } }) + result()
    )
    assert.deepStrictEqual(r.limited, [])
  })

  it("`You've hit your limit · resets 3pm (Europe/Paris)` is Limited at the next 3pm in Paris", () => {
    const r = failedWith("You've hit your limit · resets 3pm (Europe/Paris)", null)
    assert.deepStrictEqual(r.failed, ["You've hit your limit · resets 3pm (Europe/Paris)"])
    assert.strictEqual(r.limited.length, 1)
    assert.deepInclude(r.limited[0], { message: "You've hit your limit · resets 3pm (Europe/Paris)", resetAt: Date.UTC(2026, 0, 15, 14, 0), resets: true })
  })

  it("a limit text without a readable time takes the reset time of an earlier rejected rate_limit_event", () => {
    const r = run(
      line({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt: 1768500000 } }) +
        apiError("You've hit your weekly limit", 429) +
        result({ is_error: true, result: "You've hit your weekly limit", api_error_status: 429 }),
      { exitCode: 1 }
    )
    assert.strictEqual(r.limited.at(-1)?.resetAt, 1768500000000)
    assert.strictEqual(r.limited.at(-1)?.message, "You've hit your weekly limit")
  })

  it("`Claude AI usage limit reached|<epoch seconds>` is Limited at that time", () => {
    const r = failedWith("Claude AI usage limit reached|1768500000", null)
    assert.deepInclude(r.limited[0], { resetAt: 1768500000000, resets: true })
  })

  it("HTTP 429 and 529 are Limited at an unknown time; a credit balance too low does not reset", () => {
    assert.deepInclude(failedWith("API Error: Request rejected (429) · slow down", 429).limited[0], { resetAt: null, resets: true })
    assert.deepInclude(failedWith("API Error: 529 Overloaded", 529).limited[0], { resetAt: null, resets: true })
    assert.deepInclude(failedWith("API Error: 400 Your credit balance is too low to access the Anthropic API.", 400).limited[0], {
      resetAt: null,
      resets: false
    })
  })

  it("other API errors, and the agent's own words about limits, are not limits", () => {
    assert.deepStrictEqual(failedWith("API Error: 500 Internal server error", 500).limited, [])
    const said = run(assistant([text("You've hit your limit · resets 3pm (Europe/Paris)")]) + result({ result: "You've hit your limit · resets 3pm (Europe/Paris)" }))
    assert.deepStrictEqual(said.limited, [])
    assert.deepStrictEqual(said.failed, [])
  })
})
