import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, judgeCompletion, outputOf } from "@spool/core"
import { compactJsonLine, makeLineBuffer } from "@spool/core"
import { limitConformance, outputConformance } from "@spool/testkit/harnessConformance"
import { inBatches, sortEvents } from "@spool/testkit/harnessEvents"
import { decodeLine } from "../src/OpencodeEvent.js"

const utf8 = (text: string) => new TextEncoder().encode(text)
import { makeOpencodeOutput } from "../src/OpencodeOutput.js"

const cwd = "/repo"
const stdout = (text: string) => outputOf("stdout", text)
const stderr = (text: string) => outputOf("stderr", text)
const exited = HarnessEvent.Exited({ exitCode: 0, signal: null })

const line = (event: object) => `${JSON.stringify(event)}\n`
const text = (id: string, body: string) => line({ type: "text", sessionID: "s", part: { id, type: "text", text: body } })
const stepFinish = (input: number, output: number, cost: number) =>
  line({
    type: "step_finish",
    part: { type: "step-finish", reason: "stop", tokens: { total: input + output, input, output, reasoning: 1, cache: { read: 2, write: 3 } }, cost }
  })
const toolUse = (tool: string, state: object) => line({ type: "tool_use", part: { type: "tool", tool, callID: "c", state } })

/** Feeds the chunks, then `Exited`, and returns every event except the raw `Output`. */
const translate = (chunks: ReadonlyArray<HarnessEvent>) => {
  const output = makeOpencodeOutput({ cwd })
  const sorted = sortEvents([...chunks, exited].flatMap(output.feed))
  return { ...sorted, limits: sorted.limited.map(({ _tag, ...limit }) => limit) }
}

outputConformance({ agent: "opencode", makeOutput: () => makeOpencodeOutput({ cwd }), chunks: [stdout(text("p1", "hi")), stderr("some log\n")] })

/** An `error` event of `opencode run --format json`: the provider's API error as opencode passes it on. */
const apiError = (data: object) => stdout(line({ type: "error", error: { name: "APIError", data: { isRetryable: true, ...data } } }))

limitConformance({
  agent: "opencode",
  makeOutput: () => makeOpencodeOutput({ cwd }),
  now: 0,
  limits: [
    {
      name: "an API error with status 429 and retry-after in seconds: after as many seconds",
      chunks: [apiError({ message: "Rate limit reached", statusCode: 429, responseHeaders: { "Retry-After": "2" } })],
      limited: [{ message: "Rate limit reached", resetAt: null, retryAfterMs: 2000, resets: true }],
      display: "✗ opencode error: Rate limit reached\n"
    },
    {
      name: "retry-after-ms, before retry-after",
      chunks: [apiError({ message: "slow down", status: 429, responseHeaders: { "retry-after-ms": "1500", "retry-after": "2" } })],
      limited: [{ message: "slow down", resetAt: null, retryAfterMs: 1500, resets: true }]
    },
    {
      name: "status 529 (overloaded) with an HTTP date in retry-after: at that time",
      chunks: [apiError({ message: "Overloaded", statusCode: 529, responseHeaders: { "retry-after": "Wed, 25 Nov 2026 15:51:00 GMT" } })],
      limited: [{ message: "Overloaded", resetAt: Date.UTC(2026, 10, 25, 15, 51), retryAfterMs: null, resets: true }]
    },
    {
      name: "status 429 without a retry-after: at a time nobody said",
      chunks: [apiError({ message: "Too Many Requests", statusCode: 429 })],
      limited: [{ message: "Too Many Requests", resetAt: null, retryAfterMs: null, resets: true }]
    },
    {
      name: "a used-up quota: one waiting does not restore",
      chunks: [
        apiError({
          message: "You exceeded your current quota, please check your plan and billing details.",
          statusCode: 429,
          responseBody: "{\"error\":{\"code\":\"insufficient_quota\"}}"
        })
      ],
      limited: [{ message: "You exceeded your current quota, please check your plan and billing details.", resetAt: null, retryAfterMs: null, resets: false }]
    }
  ],
  notLimits: [
    { name: "another API error, though it speaks of a rate limit (HTTP 400)", chunks: [stdout(line({ type: "error", error: { name: "APIError", data: { message: "rate limit exceeded", statusCode: 400 } } }))] },
    { name: "an error with no status, in a limit's words", chunks: [stdout(line({ type: "error", error: { name: "UnknownError", data: { message: "You've hit your limit · resets 3pm" } } }))] },
    { name: "the agent's own text in a limit's words", chunks: [stdout(text("p1", "You've hit your usage limit. Try again at 3:51 PM.\nHTTP 429 Too Many Requests"))] },
    { name: "stderr that speaks of a 429", chunks: [stderr("429 Too Many Requests retry-after: 2\n")] }
  ],
  agentSays: (words) => [stdout(text("p1", words) + stepFinish(1, 1, 0))]
})

describe("opencode JSON output", () => {
  it("reassembles an event line split across chunks", () => {
    const whole = text("p1", "Done.\n<promise>COMPLETE</promise>")
    const result = translate([stdout(whole.slice(0, 10)), stdout(whole.slice(10, 40)), stdout(whole.slice(40))])
    assert.strictEqual(result.agentText, "Done.\n<promise>COMPLETE</promise>")
    assert.strictEqual(result.display, "Done.\n<promise>COMPLETE</promise>")
  })

  it("reads a last line that has no newline when the process exits", () => {
    const result = translate([stdout(text("p1", "the end").trimEnd())])
    assert.strictEqual(result.agentText, "the end")
    assert.strictEqual(result.events.at(-1)?._tag, "Exited")
  })

  it("reports a text part once, and only what is new when the same part grows", () => {
    const result = translate([stdout(text("p1", "Hello")), stdout(text("p1", "Hello")), stdout(text("p1", "Hello world"))])
    assert.strictEqual(result.agentText, "Hello world")
    assert.strictEqual(result.display, "Hello world")
  })

  it("keeps what a part said when a later copy of it rewrites it instead of adding to it", () => {
    const result = translate([stdout(text("p1", "Hello world")), stdout(text("p1", "Hello there, friend")), stdout(text("p1", "Hello"))])
    assert.strictEqual(result.agentText, "Hello world")
    assert.strictEqual(result.display, "Hello world")
  })

  it("reports nothing for an empty text part, so the next part goes on the same line", () => {
    const result = translate([stdout(text("p1", "")), stdout(text("p2", "Hi"))])
    assert.deepStrictEqual(result.events.filter((event) => event._tag === "AgentText"), [HarnessEvent.AgentText({ text: "Hi" })])
    assert.strictEqual(result.display, "Hi")
  })

  it("starts each text part on a new line, so a promise opening a later part is found once", () => {
    const result = translate([stdout(text("p1", "Writing the file.")), stdout(text("p2", "<promise>COMPLETE</promise>"))])
    assert.strictEqual(result.agentText, "Writing the file.\n<promise>COMPLETE</promise>")
    assert.isTrue(judgeCompletion(result.agentText, { token: "COMPLETE", prompt: "" }).claimed)
    assert.strictEqual(result.agentText.split("<promise>COMPLETE</promise>").length, 2)
  })

  it("shows one line per tool call, paths relative to the working directory, and never takes tool data as agent text", () => {
    const result = translate([
      stdout(text("p1", "Let me write it.")),
      stdout(toolUse("write", {
        status: "completed",
        input: { filePath: "/repo/src/a.ts", content: "<promise>COMPLETE</promise>" },
        output: "<promise>COMPLETE</promise>"
      })),
      stdout(toolUse("bash", { status: "completed", input: { command: "npm test\necho more", description: "Run tests" }, output: "ok" })),
      stdout(toolUse("read", { status: "error", input: { filePath: "/elsewhere/b.ts" }, error: "File not found" }))
    ])
    assert.strictEqual(result.display, "Let me write it.\n→ write src/a.ts\n→ bash npm test\n✗ read /elsewhere/b.ts: File not found\n")
    assert.strictEqual(result.agentText, "Let me write it.")
  })

  it("names each tool call by its file, path, command, pattern, url or description, else by its title", () => {
    const result = translate([
      stdout(toolUse("list", { status: "completed", input: { path: "/repo/src" } })),
      stdout(toolUse("glob", { status: "completed", input: { pattern: "**/*.ts", path: "" } })),
      stdout(toolUse("grep", { status: "completed", input: { pattern: "TODO", include: "*.ts" } })),
      stdout(toolUse("webfetch", { status: "completed", input: { url: "https://example.com/docs", format: "markdown" } })),
      stdout(toolUse("task", { status: "completed", input: { description: "Find the tests", prompt: "Look for them", subagent_type: "general" } })),
      stdout(toolUse("todowrite", { status: "completed", input: { todos: [{ content: "write a.ts" }] }, title: "1 todos" })),
      stdout(toolUse("todoread", { status: "completed", input: {} })),
      stdout(toolUse("bash", { status: "error", input: { command: "false" } }))
    ])
    assert.strictEqual(
      result.display,
      [
        "→ list src",
        "→ glob **/*.ts",
        "→ grep TODO",
        "→ webfetch https://example.com/docs",
        "→ task Find the tests",
        "→ todowrite 1 todos",
        "→ todoread",
        "✗ bash false: failed",
        ""
      ].join("\n")
    )
  })

  it("reports each step's tokens and cost as one Usage", () => {
    const result = translate([stdout(stepFinish(100, 20, 0.5)), stdout(stepFinish(7, 3, 0.25))])
    assert.deepStrictEqual(result.usage, [
      { inputTokens: 100, outputTokens: 20, reasoningTokens: 1, cacheReadTokens: 2, cacheWriteTokens: 3, cost: 0.5 },
      { inputTokens: 7, outputTokens: 3, reasoningTokens: 1, cacheReadTokens: 2, cacheWriteTokens: 3, cost: 0.25 }
    ])
  })

  it("counts missing token fields as zero", () => {
    const result = translate([stdout(line({ type: "step_finish", part: { tokens: { input: 5 } } }))])
    assert.deepStrictEqual(result.usage, [
      { inputTokens: 5, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0 }
    ])
  })

  it("shows lines that are not JSON events, and ignores unknown or malformed events", () => {
    const result = translate([
      stdout("plain words from a plugin\n42\n\n"),
      stdout(line({ type: "step_start", part: { type: "step-start" } })),
      stdout(line({ type: "something_new", part: { text: "<promise>COMPLETE</promise>" } })),
      stdout(line({ type: "text", part: { text: "no id" } })),
      stdout("{ broken json\n")
    ])
    assert.strictEqual(result.display, "plain words from a plugin\n42\n{ broken json\n")
    assert.strictEqual(result.agentText, "")
    assert.deepStrictEqual(result.usage, [])
  })

  it("shows an error event", () => {
    const result = translate([
      stdout(line({ type: "error", error: { name: "APIError", data: { message: "bad request", statusCode: 400 } } }))
    ])
    assert.strictEqual(result.display, "✗ opencode error: bad request\n")
  })

  it("shows an error event with neither message nor name as an unknown error, still a limit when its status is 429", () => {
    const result = translate([stdout(line({ type: "error", error: { data: { statusCode: 429 } } }))])
    assert.strictEqual(result.display, "✗ opencode error: unknown error\n")
    assert.deepStrictEqual(result.limits, [{ message: "HTTP 429", resetAt: null, retryAfterMs: null, resets: true }])
  })

  it("warns once, suggesting --allow-all, when opencode auto-rejects permission requests", () => {
    const result = translate([
      stderr("\x1b[93m\x1b[1m! \x1b[0mpermission requested: edit (src/a.ts); auto-rej"),
      stderr("ecting\n"),
      stdout(toolUse("write", { status: "error", input: { filePath: "/repo/src/a.ts" }, error: "The user rejected permission to use this specific tool call." })),
      stderr("! permission requested: bash (rm -rf x); auto-rejecting\n")
    ])
    assert.strictEqual(result.warnings.length, 1)
    assert.include(result.warnings[0], "edit (src/a.ts)")
    assert.include(result.warnings[0], "--allow-all")
    assert.include(result.display, "! permission requested: edit (src/a.ts); auto-rejecting\n")
    assert.notInclude(result.display, "\x1b[")
  })

  it("warns on a rejected tool call even without the stderr notice", () => {
    const result = translate([
      stdout(toolUse("write", { status: "error", input: { filePath: "/repo/a.txt" }, error: "The user rejected permission to use this specific tool call." }))
    ])
    assert.strictEqual(result.warnings.length, 1)
    assert.include(result.warnings[0], "write a.txt")
  })

  it("does not warn about other tool errors or ordinary stderr", () => {
    const result = translate([
      stdout(toolUse("bash", { status: "error", input: { command: "false" }, error: "exit code 1" })),
      stderr("INFO something\n")
    ])
    assert.deepStrictEqual(result.warnings, [])
  })

  it("shows stderr lines without their colour codes, and skips blank ones", () => {
    const result = translate([stderr("\x1b[2mINFO\x1b[0m starting\n   \n\x1b[0m \t\nINFO done\n")])
    assert.strictEqual(result.display, "INFO starting\nINFO done\n")
  })

  it("reads a long text part whole, whether it comes at once or in pieces, written compactly or with spaces", () => {
    const long = "x".repeat(100_000)
    assert.strictEqual(translate([stdout(text("p1", long))]).agentText, long)
    assert.strictEqual(translate(inBatches(text("p1", long), 30_000)).agentText, long)
    const spaced = `{"type" : "text", "part" : {"id" : "p2", "type" : "text", "text" : "${long}<promise>COMPLETE</promise>"}}\n`
    const result = translate(inBatches(spaced, 30_000))
    assert.strictEqual(result.agentText, `${long}<promise>COMPLETE</promise>`)
    assert.strictEqual(result.display, `${long}<promise>COMPLETE</promise>`)
  })

  it("reads a long error line (300 KB) in bounded form, its strings cut to their first KiB", () => {
    const result = translate([stdout(line({ type: "error", error: { name: "APIError", data: { message: "错".repeat(100_000) } } }))])
    const message = /^✗ opencode error: (错+)\n$/.exec(result.display)?.[1]
    assert.isDefined(message, result.display.slice(0, 40))
    assert.isAtMost(utf8(message!).length, 1024)
  })

  it("cuts the long strings of a long tool call line, and still shows the call", () => {
    const content = "y".repeat(100_000)
    const line = toolUse("write", { status: "completed", input: { filePath: "/repo/big.txt", content }, output: content })
    for (const chunks of [[stdout(line)], inBatches(line, 30_000)]) {
      const result = translate(chunks)
      assert.strictEqual(result.display, "→ write big.txt\n")
      assert.strictEqual(result.agentText, "")
    }
  })

  it("drops an over-long line, says so, and goes on with the next one", () => {
    const output = makeOpencodeOutput({ cwd, maxLineLength: 100 })
    const events = [
      stdout(`{"type":"text","part":{"id":"big","text":"${"x".repeat(80)}`),
      stdout(`${"x".repeat(80)}<promise>COMPLETE</promise>"}}\n`),
      stdout(text("p2", "after")),
      exited
    ].flatMap(output.feed)
    const agentText = events.flatMap((e) => (e._tag === "AgentText" ? [e.text] : [])).join("")
    const display = events.flatMap((e) => (e._tag === "Display" ? [e.text] : [])).join("")
    assert.strictEqual(agentText, "after")
    assert.match(display, /opencode printed a \d+-byte line on stdout; it is only in the log/)
  })
})

describe("line buffer", () => {
  it("splits chunks into lines and keeps the unterminated rest until flushed", () => {
    const buffer = makeLineBuffer(100)
    assert.deepStrictEqual(buffer.push(utf8("a\nb")), [{ _tag: "Line", text: "a" }])
    assert.deepStrictEqual(buffer.push(utf8("c\r\n\nd")), [{ _tag: "Line", text: "bc\r" }, { _tag: "Line", text: "" }])
    assert.deepStrictEqual(buffer.flush(), [{ _tag: "Line", text: "d" }])
    assert.deepStrictEqual(buffer.flush(), [])
  })

  it("reports a line longer than the limit as TooLong without keeping it", () => {
    const buffer = makeLineBuffer(10)
    assert.deepStrictEqual(buffer.push(utf8("12345678")), [])
    assert.deepStrictEqual(buffer.push(utf8("9012345")), [])
    assert.deepStrictEqual(buffer.push(utf8("67\nok\n")), [{ _tag: "TooLong", length: 17 }, { _tag: "Line", text: "ok" }])
    assert.deepStrictEqual(buffer.push(utf8("x".repeat(11))), [])
    assert.deepStrictEqual(buffer.flush(), [{ _tag: "TooLong", length: 11 }])
  })
})

describe("decodeLine", () => {
  it("tells events, ignored JSON and plain lines apart", () => {
    assert.strictEqual(decodeLine(text("p", "x").trimEnd())._tag, "Event")
    assert.strictEqual(decodeLine(`{"type":"step_start"}`)._tag, "Ignored")
    assert.deepStrictEqual(decodeLine(`["type"]`), { _tag: "Plain", text: `["type"]` })
    assert.deepStrictEqual(decodeLine("hello"), { _tag: "Plain", text: "hello" })
  })
  it("gives a line longer than the long-line limit as its bytes, whole", () => {
    const buffer = makeLineBuffer(1000, 8)
    assert.deepStrictEqual(buffer.push(utf8("short\n0123")), [{ _tag: "Line", text: "short" }])
    const [line] = buffer.push(utf8("456789é\n"))
    assert.strictEqual(line?._tag, "Long")
    assert.strictEqual(new TextDecoder().decode(line?._tag === "Long" ? line.bytes : new Uint8Array()), "0123456789é")
  })

  it("cuts long JSON strings to their first bytes, never inside an escape or a character", () => {
    const output = `a\\"b${"\\n".repeat(3)}é${"x".repeat(2000)}`
    const line = JSON.stringify({ type: "tool_use", part: { tool: "bash", state: { status: "completed", output } } })
    const compact = JSON.parse(compactJsonLine(utf8(line), 10))
    assert.strictEqual(compact.part.tool, "bash")
    assert.strictEqual(compact.part.state.status, "completed")
    assert.isTrue(output.startsWith(compact.part.state.output))
    assert.isAtMost(compact.part.state.output.length, 10)
    for (let keep = 1; keep < 40; keep++) assert.doesNotThrow(() => JSON.parse(compactJsonLine(utf8(line), keep)))
  })
})
