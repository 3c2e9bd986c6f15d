import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, judgeCompletion, outputOf } from "@spool/core"
import { limitConformance, outputConformance } from "@spool/testkit/harnessConformance"
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

outputConformance({
  agent: "claude",
  makeOutput: () => ClaudeOutput.makeClaudeOutput({ cwd: CWD, now: () => NOW }),
  chunks: [outputOf("stdout", init + assistant([text("hi")])), outputOf("stderr", "a warning\n"), outputOf("stdout", result())]
})

/** A run that failed with `message` as claude reports an API error: in an assistant message, and in the result. */
const failedWith = (message: string, status: number | null) => ({
  chunks: [outputOf("stdout", apiError(message, status ?? 0) + result({ is_error: true, result: message, api_error_status: status }))],
  exitCode: 1
})

/**
 * A subscription's usage limit as claude 2.1.330 reports it (its three lines, trimmed of fields
 * spool does not read), the API having refused the request with HTTP 429 and the unified headers
 * `anthropic-ratelimit-unified-status: rejected`, `-reset: <epoch s>`, `-representative-claim:
 * five_hour`: the limit lifts at `resetsAt` (epoch s), and the text shows that time cut to the minute.
 */
const subscriptionLimit = (resetsAt: number, shown: string) => {
  const info = { status: "rejected", resetsAt, rateLimitType: "five_hour", isUsingOverage: false }
  const message = `You've hit your 5-hour limit · resets ${shown}`
  return {
    chunks: [
      outputOf(
        "stdout",
        line({ type: "rate_limit_event", rate_limit_info: { ...info, unifiedWindows: { five_hour: { utilization: 1, resetsAt, status: "rejected" } } }, session_id: "s" }) +
          assistant([text(message)], null, {
            error: "rate_limit",
            is_api_error_message: true,
            api_error_status: 429,
            api_error: "usage_limit_reached",
            api_error_params: { rate_limit_info: info },
            api_error_type: "rate_limit_error"
          }) +
          result({
            is_error: true,
            result: message,
            total_cost_usd: 0,
            usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
            num_turns: 1,
            api_error_status: 429,
            api_error_type: "rate_limit_error",
            api_error: "usage_limit_reached",
            terminal_reason: "api_error"
          })
      )
    ],
    exitCode: 1
  }
}

limitConformance({
  agent: "claude",
  makeOutput: (now) => ClaudeOutput.makeClaudeOutput({ cwd: CWD, now: () => now }),
  now: NOW,
  limits: [
    {
      name: "a rejected rate_limit_event, resetsAt in seconds: at that time",
      chunks: [outputOf("stdout", line({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt: 1768500000, rateLimitType: "five_hour" } }))],
      limited: [{ message: "claude hit a usage limit (five_hour); it resets at 2026-01-15T18:00:00.000Z", resetAt: 1768500000000, retryAfterMs: null, resets: true }]
    },
    {
      // The reset eight seconds away, in the minute the text shows: to the second, from the event, not tomorrow at 10am.
      name: "a subscription's limit (a rejected rate_limit_event, then `You've hit your 5-hour limit · resets 10am (UTC)`): at the event's reset, to the second",
      ...subscriptionLimit(NOW / 1000 + 8, "10am (UTC)"),
      limited: [
        { message: "claude hit a usage limit (five_hour); it resets at 2026-01-15T10:00:08.000Z", resetAt: NOW + 8000, retryAfterMs: null, resets: true },
        { message: "You've hit your 5-hour limit · resets 10am (UTC)", resetAt: NOW + 8000, retryAfterMs: null, resets: true }
      ],
      failed: ["You've hit your 5-hour limit · resets 10am (UTC)"]
    },
    {
      name: "`You've hit your limit · resets 3pm (Europe/Paris)`: at the next 3pm in Paris, the run failed with it",
      ...failedWith("You've hit your limit · resets 3pm (Europe/Paris)", null),
      limited: [{ message: "You've hit your limit · resets 3pm (Europe/Paris)", resetAt: Date.UTC(2026, 0, 15, 14, 0), retryAfterMs: null, resets: true }],
      failed: ["You've hit your limit · resets 3pm (Europe/Paris)"]
    },
    {
      name: "`Claude AI usage limit reached|<epoch seconds>`: at that time",
      ...failedWith("Claude AI usage limit reached|1768500000", null),
      limited: [{ message: "claude usage limit reached; it resets at 2026-01-15T18:00:00.000Z", resetAt: 1768500000000, retryAfterMs: null, resets: true }]
    },
    {
      name: "HTTP 429: at a time nobody said",
      ...failedWith("API Error: Request rejected (429) · slow down", 429),
      limited: [{ message: "API Error: Request rejected (429) · slow down", resetAt: null, retryAfterMs: null, resets: true }]
    },
    {
      name: "HTTP 529 (overloaded): at a time nobody said",
      ...failedWith("API Error: 529 Overloaded", 529),
      limited: [{ message: "API Error: 529 Overloaded", resetAt: null, retryAfterMs: null, resets: true }]
    },
    {
      name: "a credit balance too low: a quota waiting does not restore",
      ...failedWith("API Error: 400 Your credit balance is too low to access the Anthropic API.", 400),
      limited: [{ message: "API Error: 400 Your credit balance is too low to access the Anthropic API.", resetAt: null, retryAfterMs: null, resets: false }]
    }
  ],
  notLimits: [
    {
      name: "rate_limit_events that only report the state (allowed, allowed_warning)",
      chunks: [
        outputOf(
          "stdout",
          line({ type: "rate_limit_event", rate_limit_info: { status: "allowed", resetsAt: 1768500000 } }) +
            line({ type: "rate_limit_event", rate_limit_info: { status: "allowed_warning", utilization: 0.9 } }) + result()
        )
      ]
    },
    { name: "another API error (HTTP 500)", ...failedWith("API Error: 500 Internal server error", 500) },
    {
      name: "the agent's own words about a limit, in its message and its result",
      chunks: [outputOf("stdout", assistant([text("You've hit your limit · resets 3pm (Europe/Paris)")]) + result({ result: "You've hit your limit · resets 3pm (Europe/Paris)" }))],
      failed: []
    }
  ],
  agentSays: (words) => [outputOf("stdout", init + assistant([text(words)]) + result({ result: words }))]
})

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

describe("ClaudeOutput: what is shown", () => {
  it("a message already ending with a newline gets no second one; a blank one is skipped", () => {
    const r = run(assistant([text("Line.\n"), text("  \n"), text("Next.")]) + result())
    assert.strictEqual(r.agentText, "Line.\nNext.\n")
    assert.strictEqual(r.display, "Line.\nNext.\n")
  })

  it("a tool call is named by the first non-empty path, command, pattern, url or description of its input", () => {
    const shown = (input: unknown) => run(assistant([{ type: "tool_use", id: "t", name: "Tool", input }]) + result()).display
    assert.strictEqual(shown({ description: "d", file_path: "/repo/a.ts" }), "→ Tool a.ts\n")
    assert.strictEqual(shown({ notebook_path: "/repo/n.ipynb" }), "→ Tool n.ipynb\n")
    assert.strictEqual(shown({ path: "/repository/src" }), "→ Tool /repository/src\n")
    assert.strictEqual(shown({ url: "https://example.com", description: "" }), "→ Tool https://example.com\n")
    assert.strictEqual(shown({ file_path: "", description: "look around" }), "→ Tool look around\n")
    assert.strictEqual(shown({ command: "npm test\necho more" }), "→ Tool npm test\n")
    assert.strictEqual(shown({ command: "x".repeat(200) }), `→ Tool ${"x".repeat(119)}…\n`)
    assert.strictEqual(shown({ file_path: 42, command: "ls" }), "→ Tool ls\n")
    assert.strictEqual(shown({ limit: 3 }), "→ Tool\n")
    assert.strictEqual(shown(undefined), "→ Tool\n")
  })

  it("a failed tool call is shown with the first line of its result, or `failed`; a successful one is not", () => {
    const r = run(
      assistant([toolUse("t1", "Bash", { command: "make" }), toolUse("t2", "Read", { file_path: "/repo/x" })]) +
        line({
          type: "user",
          message: {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "make: *** no rule\nmore" }], is_error: true },
              { type: "tool_result", tool_use_id: "t2", content: "", is_error: true },
              { type: "tool_result", tool_use_id: "t9", content: "gone", is_error: true },
              { type: "tool_result", tool_use_id: "t2", content: "fine" }
            ]
          },
          parent_tool_use_id: null
        }) + result()
    )
    assert.strictEqual(r.display, "→ Bash make\n→ Read x\n✗ Bash make: make: *** no rule\n✗ Read x: failed\n✗ tool call: gone\n")
  })

  it("claude's own report of an API error is shown, a sub-agent's indented, and is never AgentText", () => {
    const r = run(
      assistant([text("API Error: 500 sub-agent\ndetails")], "task1", { is_api_error_message: true }) +
        assistant([text(" ")], null, { is_api_error_message: true }) +
        result({ is_error: true, result: "" })
    )
    assert.strictEqual(r.agentText, "")
    assert.strictEqual(r.display, "  ✗ API Error: 500 sub-agent\n✗ claude reported an error (success)\n")
    assert.deepStrictEqual(r.failed, ["claude reported an error (success)"])
  })

  it("an API error's text is cut at 500 characters", () => {
    const long = `API Error: ${"e".repeat(600)}`
    const r = run(apiError(long, 500) + result({ is_error: true, result: "" }))
    assert.strictEqual(r.display, `✗ ${long.slice(0, 499)}…\n`)
    assert.deepStrictEqual(r.failed, [`${long.slice(0, 499)}…`])
    const errors = run(result({ is_error: true, result: undefined, errors: ["a".repeat(300), "b".repeat(300)] }))
    assert.deepStrictEqual(errors.failed, [`${"a".repeat(300)}; ${"b".repeat(197)}…`])
    assert.deepStrictEqual(run(result({ is_error: true, result: long })).failed, [`${long.slice(0, 499)}…`])
  })

  it("a retry is shown with what claude knows of it", () => {
    const retry = (fields: object) => run(line({ type: "system", subtype: "api_retry", ...fields }) + result()).display
    assert.strictEqual(retry({ error_status: null, error: "overloaded_error", attempt: 2 }), "… claude retries a failed model request (overloaded_error, attempt 2)\n")
    assert.strictEqual(retry({}), "… claude retries a failed model request (error)\n")
  })

  it("a denial in the result without a readable input names the tool alone", () => {
    assert.deepStrictEqual(run(result({ permission_denials: [{ tool_name: "Bash", tool_input: null }] })).warnings, [ClaudeOutput.permissionWarning("Bash")])
    assert.deepStrictEqual(run(result({ permission_denials: [{ tool_name: "Bash", tool_input: "ls" }] })).warnings, [ClaudeOutput.permissionWarning("Bash")])
  })

  it("a denied permission names the tool call, or the tool, or `a tool`; a later denial is not warned about again", () => {
    const r = run(
      line({ type: "system", subtype: "permission_denied", tool_name: "Write" }) +
        line({ type: "system", subtype: "permission_denied" }) +
        result({ permission_denials: [{ tool_name: "Bash", tool_input: { command: "ls" } }] })
    )
    assert.strictEqual(r.display, "✗ Write: permission denied\n✗ a tool: permission denied\n")
    assert.deepStrictEqual(r.warnings, [ClaudeOutput.permissionWarning("Write")])
    assert.strictEqual(
      r.warnings[0],
      "claude denied a tool call that needs permission (Write), so the agent could not do it; rerun with --allow-all to approve the agent's tool calls without asking"
    )
  })

  it("stderr is shown without its colour codes; blank stderr lines are not", () => {
    const r = run(result(), { stderr: "\u001b[31mwarning: slow\u001b[0m  \n \u001b[0m \n" })
    assert.strictEqual(r.display, "warning: slow\n")
  })

  it("a run without a result names its last non-blank stderr line, without a hint unless root was refused", () => {
    const r = run(assistant([text("Half")]), { stderr: "first\nError: out of memory\n\u001b[0m\n", exitCode: 1 })
    assert.deepStrictEqual(r.failed, [`${ClaudeOutput.NO_RESULT}: Error: out of memory`])
    assert.strictEqual(ClaudeOutput.NO_RESULT, "claude ended without a result")
    const long = run("", { stderr: `${"s".repeat(400)}\n`, exitCode: 1 })
    assert.deepStrictEqual(long.failed, [`${ClaudeOutput.NO_RESULT}: ${"s".repeat(299)}…`])
    assert.strictEqual(
      ClaudeOutput.rootHint,
      "claude refuses --dangerously-skip-permissions as root; set IS_SANDBOX=1 if this machine is a sandbox, or run as a non-root user"
    )
  })

  it("reads a long result line (300 KB) in bounded form, its strings cut to their first KiB", () => {
    const r = run(result({ is_error: true, subtype: "error_during_execution", result: "错".repeat(100_000) }))
    assert.strictEqual(r.failed.length, 1)
    assert.isAtMost(new TextEncoder().encode(r.failed[0]!).length, 1024)
    assert.match(r.failed[0]!, /^错+$/)
  })

  it("a long assistant line is read whole, even with spaces around its type", () => {
    const long = `${"x".repeat(100_000)} ${PROMISE}`
    const spaced = `{"type" : "assistant", "message": {"content": [{"type": "text", "text": ${JSON.stringify(long)}}]}, "parent_tool_use_id": null}\n`
    const r = run(spaced + assistant([text(long)]) + result(), { chunk: 8192 })
    assert.strictEqual(r.agentText, `${long}\n${long}\n`)
  })
})

describe("ClaudeOutput: usage, permissions and failures", () => {
  it("reports the run's totals from the result once, thinking apart from the other output tokens", () => {
    const r = run(init + assistant([text("Hi.")]) + result())
    assert.deepStrictEqual(r.usage, [{ inputTokens: 200, outputTokens: 25, reasoningTokens: 15, cacheReadTokens: 60, cacheWriteTokens: 20, cost: 0.0125 }])
    assert.deepStrictEqual(r.failed, [])
  })

  it("thinking never makes the other output tokens negative; a null thinking detail counts 0", () => {
    const usage = (u: object) => run(result({ usage: u })).usage[0]
    assert.deepInclude(usage({ output_tokens: 10, output_tokens_details: { thinking_tokens: 12 } }), { outputTokens: 0, reasoningTokens: 12 })
    assert.deepInclude(usage({ output_tokens: 10, output_tokens_details: null }), { outputTokens: 10, reasoningTokens: 0 })
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

describe("ClaudeOutput: usage limits, another form of claude's reports and a reset time carried from one report to the next", () => {
  it("a rate_limit_event with its fields at the top and resetsAt in milliseconds is read too", () => {
    const r = run(line({ type: "rate_limit_event", status: "rejected", resetsAt: 1768500000000 }))
    assert.strictEqual(r.limited[0]?.resetAt, 1768500000000)
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

  it("a rejected rate_limit_event is shown; a later one without a time keeps the earlier reset time for the run's error", () => {
    const r = run(
      line({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt: 1768500000, rateLimitType: "five_hour" } }) +
        line({ type: "rate_limit_event", rate_limit_info: { status: "rejected" } }) +
        result({ is_error: true, result: "You've hit your limit", api_error_status: null }),
      { exitCode: 1 }
    )
    assert.include(r.display, "✗ claude hit a usage limit (five_hour); it resets at 2026-01-15T18:00:00.000Z\n✗ claude hit a usage limit\n")
    assert.deepStrictEqual(r.limited.map(({ _tag, ...limit }) => limit), [
      { message: "claude hit a usage limit (five_hour); it resets at 2026-01-15T18:00:00.000Z", resetAt: 1768500000000, retryAfterMs: null, resets: true },
      { message: "claude hit a usage limit", resetAt: null, retryAfterMs: null, resets: true },
      { message: "You've hit your limit", resetAt: 1768500000000, retryAfterMs: null, resets: true }
    ])
  })

  it("a limit with its own reset time keeps it over an earlier rate_limit_event's", () => {
    const r = run(
      line({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt: 1768500000 } }) +
        result({ is_error: true, result: "Claude AI usage limit reached|1768600000" }),
      { exitCode: 1 }
    )
    assert.strictEqual(r.limited.at(-1)?.resetAt, 1768600000000)
  })
})
