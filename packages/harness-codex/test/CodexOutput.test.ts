import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, judgeCompletion, outputOf } from "@spool/core"
import { limitConformance, outputConformance } from "@spool/testkit/harnessConformance"
import { inBatches, sortEvents } from "@spool/testkit/harnessEvents"
import { decodeLine, errorMessage } from "../src/CodexEvent.js"
import { incompleteTurn, makeCodexOutput, shownCommand } from "../src/CodexOutput.js"

const cwd = "/repo"
const stdout = (text: string) => outputOf("stdout", text)
const stderr = (text: string) => outputOf("stderr", text)
const exited = (exitCode: number | null = 0, signal: string | null = null) => HarnessEvent.Exited({ exitCode, signal })

const line = (event: object) => `${JSON.stringify(event)}\n`
const completed = (item: object) => line({ type: "item.completed", item: { id: "item_0", ...item } })
const message = (text: string) => completed({ type: "agent_message", text })
const command = (cmd: string, exit_code: number | null, status = exit_code === 0 ? "completed" : "failed") =>
  completed({ type: "command_execution", command: cmd, aggregated_output: "<promise>COMPLETE</promise>\n", exit_code, status })
const turnCompleted = line({
  type: "turn.completed",
  usage: { input_tokens: 200, cached_input_tokens: 60, cache_write_input_tokens: 7, output_tokens: 40, reasoning_output_tokens: 10 }
})
const turnFailed = (message: string) => line({ type: "turn.failed", error: { message } })
const streamError = (message: string) => line({ type: "error", message })

/** Feeds the chunks, then `Exited` (after `turn.completed` unless `complete` is false), and sorts what came out. */
const translate = (chunks: ReadonlyArray<HarnessEvent>, end: HarnessEvent = exited(), now = 0) => {
  const output = makeCodexOutput({ cwd, now: () => now })
  return sortEvents([...chunks, end].flatMap(output.feed))
}

outputConformance({
  agent: "codex",
  makeOutput: () => makeCodexOutput({ cwd, now: () => 0 }),
  chunks: [stdout(message("hi")), stderr("WARNING: proceeding\n"), stdout(turnCompleted)]
})

/** codex's own words for a usage limit (`try again at <time>.`, `try again later.`). */
const USAGE = "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again"

limitConformance({
  agent: "codex",
  makeOutput: (now) => makeCodexOutput({ cwd, now: () => now }),
  // Local time, so the reset times hold in any time zone.
  now: new Date(2026, 10, 23, 20, 9).getTime(),
  limits: [
    {
      name: "the usage limit at a time of day, in the error and the failed turn: at that time, once",
      chunks: [stdout(streamError(`${USAGE} at 10:09 PM.`)), stdout(turnFailed(`${USAGE} at 10:09 PM.`))],
      exitCode: 1,
      limited: [{ message: `${USAGE} at 10:09 PM.`, resetAt: new Date(2026, 10, 23, 22, 9).getTime(), retryAfterMs: null, resets: true }],
      failed: [`${USAGE} at 10:09 PM.`]
    },
    {
      name: "a usage limit in an error event alone: once, at the time it names, and the turn that completes not failed",
      chunks: [stdout(streamError("You've hit your usage limit. Try again at 10:09 PM.")), stdout(streamError("exceeded retry limit, last status: 429 Too Many Requests")), stdout(turnCompleted)],
      limited: [{ message: "You've hit your usage limit. Try again at 10:09 PM.", resetAt: new Date(2026, 10, 23, 22, 9).getTime(), retryAfterMs: null, resets: true }],
      failed: []
    },
    {
      name: "`try again later`: at a time nobody said, the run failed with it",
      chunks: [
        stdout(streamError("You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again later.")),
        stdout(turnFailed("You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again later."))
      ],
      exitCode: 1,
      limited: [{ message: "You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again later.", resetAt: null, retryAfterMs: null, resets: true }],
      failed: ["You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again later."]
    },
    {
      name: "a rate limit codex gave up retrying: at a time nobody said",
      chunks: [stdout(turnFailed("exceeded retry limit, last status: 429 Too Many Requests"))],
      exitCode: 1,
      limited: [{ message: "exceeded retry limit, last status: 429 Too Many Requests", resetAt: null, retryAfterMs: null, resets: true }]
    },
    {
      name: "a quota used up: one waiting does not restore",
      chunks: [stdout(turnFailed("Quota exceeded. Check your plan and billing details."))],
      exitCode: 1,
      limited: [{ message: "Quota exceeded. Check your plan and billing details.", resetAt: null, retryAfterMs: null, resets: false }]
    }
  ],
  notLimits: [
    {
      name: "another failed turn (high demand)",
      chunks: [stdout(turnFailed("We’re currently experiencing high demand, which may cause temporary errors."))],
      exitCode: 1,
      failed: ["We’re currently experiencing high demand, which may cause temporary errors."]
    },
    { name: "the agent's own words about a limit", chunks: [stdout(message("You've hit your usage limit. Try again at 3:51 PM.")), stdout(turnCompleted)] }
  ],
  agentSays: (words) => [stdout(message(words)), stdout(turnCompleted)]
})

describe("codex JSON output", () => {
  it("reports each agent message whole, on a line of its own, so a promise opening the second one is found once", () => {
    const whole = message("Writing the file.") + message("<promise>COMPLETE</promise>") + turnCompleted
    const result = translate([stdout(whole.slice(0, 17)), stdout(whole.slice(17, 90)), stdout(whole.slice(90))])
    assert.strictEqual(result.agentText, "Writing the file.\n<promise>COMPLETE</promise>\n")
    assert.strictEqual(result.display, result.agentText)
    assert.isTrue(judgeCompletion(result.agentText, { token: "COMPLETE", prompt: "" }).claimed)
    assert.strictEqual(result.agentText.split("<promise>COMPLETE</promise>").length, 2)
  })

  it("shows one line per finished command with its exit code, and never takes command output as agent text", () => {
    const result = translate([
      stdout(line({ type: "item.started", item: { id: "c", type: "command_execution", command: "/bin/bash -c 'npm test'", exit_code: null, status: "in_progress" } })),
      stdout(command(`/bin/bash -c "printf 'hello\\\\n' > hello.txt"`, 0)),
      stdout(command("/bin/bash -c 'exit 3'", 3)),
      stdout(command("bash -lc 'npm test\necho more'", 0)),
      stdout(turnCompleted)
    ])
    assert.strictEqual(result.display, "→ $ printf 'hello\\n' > hello.txt (exit 0)\n✗ $ exit 3 (exit 3)\n→ $ npm test (exit 0)\n")
    assert.strictEqual(result.agentText, "")
  })

  it("shows one line per file a patch changed, relative to the working directory", () => {
    const result = translate([
      stdout(completed({ type: "file_change", status: "completed", changes: [{ path: "/repo/src/a.ts", kind: "add" }, { path: "/elsewhere/b.ts", kind: "update" }] })),
      stdout(completed({ type: "file_change", status: "failed", changes: [{ path: "/repo/c.ts", kind: "delete" }] })),
      stdout(turnCompleted)
    ])
    assert.strictEqual(result.display, "→ add src/a.ts\n→ update /elsewhere/b.ts\n✗ delete c.ts\n")
  })

  it("reports the turn's tokens as one Usage with cost unknown, cached and reasoning tokens apart", () => {
    const result = translate([stdout(turnCompleted)])
    assert.deepStrictEqual(result.usage, [
      { inputTokens: 140, outputTokens: 30, reasoningTokens: 10, cacheReadTokens: 60, cacheWriteTokens: 7, cost: null }
    ])
    assert.deepStrictEqual(result.failed, [])
  })

  it("counts missing token fields as zero", () => {
    const result = translate([stdout(line({ type: "turn.completed", usage: { input_tokens: 5 } }))])
    assert.deepStrictEqual(result.usage, [
      { inputTokens: 5, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: null }
    ])
  })

  it("turns turn.failed into Failed with the message inside the API's error body, shown once", () => {
    const body = JSON.stringify({ error: { message: "bad request: context too long", type: "invalid_request_error" } })
    const result = translate([stdout(streamError(body)), stdout(turnFailed(body))], exited(1))
    assert.deepStrictEqual(result.failed, ["bad request: context too long"])
    assert.strictEqual(result.display, "✗ codex error: bad request: context too long\n")
    assert.deepStrictEqual(result.limited, [])
  })

  it("keeps a plain turn.failed message as it is", () => {
    const text = "We’re currently experiencing high demand, which may cause temporary errors."
    const result = translate([stdout(turnFailed(text))], exited(1))
    assert.deepStrictEqual(result.failed, [text])
    assert.strictEqual(result.display, `✗ codex error: ${text}\n`)
  })

  it("shows non-fatal errors without failing the run", () => {
    const result = translate([
      stdout(streamError("Reconnecting… 1/5")),
      stdout(completed({ type: "error", message: "Model metadata for `x` not found." })),
      stdout(turnCompleted)
    ])
    assert.strictEqual(result.display, "✗ codex error: Reconnecting… 1/5\n! codex: Model metadata for `x` not found.\n")
    assert.deepStrictEqual(result.failed, [])
  })

  it("fails a run that exits without completing its turn, with codex's own error line", () => {
    const interrupted = translate([stdout(line({ type: "turn.started" }))], exited(1))
    assert.deepStrictEqual(interrupted.failed, ["codex ended without completing its turn (exit code 1)"])
    const killed = translate([], exited(null, "SIGKILL"))
    assert.deepStrictEqual(killed.failed, [`${incompleteTurn} (SIGKILL)`])
    const badConfig = translate([stderr("WARNING: x\nError: approval_policy = \"untrusted\" is no longer supported\n\nStack backtrace:\n   0: <unknown>\n")], exited(1))
    assert.deepStrictEqual(badConfig.failed, [`${incompleteTurn} (exit code 1): Error: approval_policy = "untrusted" is no longer supported`])
  })

  it("shows lines that are not JSON events, and ignores unknown or malformed events", () => {
    const result = translate([
      stdout("plain words\n\n"),
      stdout(line({ type: "thread.started", thread_id: "t" })),
      stdout(completed({ type: "reasoning", text: "<promise>COMPLETE</promise>" })),
      stdout(line({ type: "something_new", text: "<promise>COMPLETE</promise>" })),
      stdout("{ broken json\n"),
      stdout(turnCompleted)
    ])
    assert.strictEqual(result.display, "plain words\n{ broken json\n")
    assert.strictEqual(result.agentText, "")
  })

  it("drops an over-long line, says so, and goes on with the next one", () => {
    const output = makeCodexOutput({ cwd, maxLineLength: 100, now: () => 0 })
    const events = [stdout(message("x".repeat(200) + "<promise>COMPLETE</promise>")), stdout(message("after")), exited()].flatMap(output.feed)
    const agentText = events.flatMap((e) => (e._tag === "AgentText" ? [e.text] : [])).join("")
    const display = events.flatMap((e) => (e._tag === "Display" ? [e.text] : [])).join("")
    assert.strictEqual(agentText, "after\n")
    assert.match(display, /codex printed a \d+-byte line on stdout; it is only in the log/)
  })
})

describe("codex JSON output: details", () => {
  it("an empty agent message is nothing; one ending with a newline gets no second one", () => {
    const result = translate([stdout(message("") + message("Done.\n") + turnCompleted)])
    assert.strictEqual(result.agentText, "Done.\n")
    assert.strictEqual(result.display, "Done.\n")
  })

  it("a command still running, declined or killed shows its status; its line is cut at 120 characters", () => {
    const result = translate([
      stdout(command("ls", null, "completed")),
      stdout(command("rm -rf /", null, "declined")),
      stdout(command(`echo ${"y".repeat(200)}`, 0)),
      stdout(completed({ type: "command_execution", command: "make" })),
      stdout(turnCompleted)
    ])
    assert.strictEqual(
      result.display,
      `→ $ ls (completed)\n✗ $ rm -rf / (declined)\n→ $ echo ${"y".repeat(114)}… (exit 0)\n→ $ make (completed)\n`
    )
  })

  it("a command that exits 0 but did not complete, or completes with another exit code, is marked failed", () => {
    const result = translate([stdout(command("npm test", 0, "failed")), stdout(command("false", 1, "completed")), stdout(turnCompleted)])
    assert.strictEqual(result.display, "✗ $ npm test (exit 0)\n✗ $ false (exit 1)\n")
  })

  it("a patch without a status counts as completed; a path merely starting like the working directory stays whole", () => {
    const result = translate([stdout(completed({ type: "file_change", changes: [{ path: "/repository/a.ts", kind: "add" }] })), stdout(turnCompleted)])
    assert.strictEqual(result.display, "→ add /repository/a.ts\n")
  })

  it("error items and errors show their first line, cut at 500 characters", () => {
    const long = "e".repeat(600)
    const result = translate([
      stdout(completed({ type: "error", message: `${long}\nmore` })),
      stdout(streamError(`${long}\nmore`)),
      stdout(turnFailed("other\nbody")),
      stdout(turnCompleted)
    ], exited(1))
    const cut = `${"e".repeat(499)}…`
    assert.strictEqual(result.display, `! codex: ${cut}\n✗ codex error: ${cut}\n✗ codex error: other\n`)
    assert.deepStrictEqual(result.failed, ["other\nbody"])
  })

  it("a turn.failed repeating an earlier error is not shown again, one with another message is", () => {
    const result = translate([stdout(streamError("first")), stdout(streamError("second")), stdout(turnFailed("first"))], exited(1))
    assert.strictEqual(result.display, "✗ codex error: first\n✗ codex error: second\n✗ codex error: first\n")
  })

  it("takes cached and reasoning tokens out without going below zero", () => {
    const result = translate([stdout(line({ type: "turn.completed", usage: { input_tokens: 5, cached_input_tokens: 9, output_tokens: 1, reasoning_output_tokens: 4 } }))])
    assert.deepStrictEqual(result.usage, [{ inputTokens: 0, outputTokens: 0, reasoningTokens: 4, cacheReadTokens: 9, cacheWriteTokens: 0, cost: null }])
  })

  it("the run's failure names the first stderr line starting with Error:, and shows every non-blank stderr line", () => {
    const result = translate([stderr("note: Error: not at the start\n"), stderr("Error: first\n"), stderr("   \n"), stderr("Error: second\n")], exited(null))
    assert.deepStrictEqual(result.failed, [`${incompleteTurn}: Error: first`])
    assert.strictEqual(result.display, "note: Error: not at the start\nError: first\nError: second\n")
  })

  it("a completed or failed turn leaves no failure at exit, whatever the exit code", () => {
    assert.deepStrictEqual(translate([stdout(turnCompleted)], exited(1)).failed, [])
    assert.deepStrictEqual(translate([stdout(turnFailed("boom"))], exited(1)).failed, ["boom"])
  })

  it("reads a long error line (300 KB) in bounded form, its strings cut to their first KiB", () => {
    const result = translate([stdout(turnFailed("错".repeat(100_000)))], exited(1))
    assert.strictEqual(result.failed.length, 1)
    assert.isAtMost(new TextEncoder().encode(result.failed[0]!).length, 1024)
    assert.match(result.failed[0]!, /^错+$/)
    // A finished item that is not the agent's message, too.
    const item = translate([stdout(completed({ type: "error", message: "错".repeat(100_000) }))]).display
    const message = /^! codex: (错+)\n/.exec(item)?.[1]
    assert.isDefined(message, item.slice(0, 40))
    assert.isAtMost(new TextEncoder().encode(message!).length, 1024)
  })

  it("a long agent message is read whole, even past the first strings of its line", () => {
    const long = `${"x".repeat(100_000)} <promise>COMPLETE</promise>`
    const output = makeCodexOutput({ cwd, now: () => 0 })
    const text = message(long)
    const events = [...inBatches(text, 8192), exited()].flatMap(output.feed)
    assert.strictEqual(events.flatMap((e) => (e._tag === "AgentText" ? [e.text] : [])).join(""), `${long}\n`)
  })
})

describe("codex command display", () => {
  it("unwraps the shell codex runs a command in", () => {
    assert.strictEqual(shownCommand(`/bin/bash -c "echo \\"a\\" \\$HOME"`), `echo "a" $HOME`)
    assert.strictEqual(shownCommand("/bin/zsh -lc 'ls -la'"), "ls -la")
    assert.strictEqual(shownCommand("bash -c ls"), "ls")
    assert.strictEqual(shownCommand("git status"), "git status")
    assert.strictEqual(shownCommand("/usr/local/bin/sh -c 'a; b'"), "a; b")
    assert.strictEqual(shownCommand("sh -lc \"echo \\`date\\` \\\\ x\""), "echo `date` \\ x")
  })

  it("unwraps a quoted script whose closing quote was cut off, as a long command read from its compact text is", () => {
    assert.strictEqual(shownCommand("bash -lc 'cat > big.txt <<EOF\nline"), "cat > big.txt <<EOF\nline")
    assert.strictEqual(shownCommand(`/bin/bash -c "echo \\"a\\" \\$HO`), `echo "a" $HO`)
    assert.strictEqual(shownCommand("bash -lc '"), "")
  })

  it("shows a command of a long event line by its script, whether the line is read whole or from its compact text", () => {
    const script = `cat > big.txt <<EOF\n${"x".repeat(2000)}\nEOF`
    const long = completed({ type: "command_execution", command: `/bin/bash -lc '${script}'`, aggregated_output: "y".repeat(100_000), exit_code: 0, status: "completed" })
    const shown = "→ $ cat > big.txt <<EOF (exit 0)\n"
    assert.strictEqual(translate([stdout(long)]).display, shown)
    assert.strictEqual(sortEvents([...inBatches(long, 8192), exited()].flatMap(makeCodexOutput({ cwd, now: () => 0 }).feed)).display, shown)
  })

  it("leaves a command alone when it is no shell wrapper, or its quoting is not one whole string", () => {
    assert.strictEqual(shownCommand("fish -c ls"), "fish -c ls")
    assert.strictEqual(shownCommand("mybash -c ls"), "mybash -c ls")
    assert.strictEqual(shownCommand("bash -c ls; echo"), "ls; echo")
    assert.strictEqual(shownCommand("bash -lc 'it'\\''s'"), "'it'\\''s'")
    assert.strictEqual(shownCommand(`bash -c "a" "b"`), `"a" "b"`)
  })
})

describe("codex event decoding", () => {
  it("tells events, ignored JSON and plain lines apart", () => {
    assert.strictEqual(decodeLine(message("x").trimEnd())._tag, "Event")
    assert.strictEqual(decodeLine(`{"type":"turn.started"}`)._tag, "Ignored")
    assert.deepStrictEqual(decodeLine(`["type"]`), { _tag: "Plain", text: `["type"]` })
    assert.deepStrictEqual(decodeLine("hello"), { _tag: "Plain", text: "hello" })
  })

  it("reads the message out of an API error body, and leaves other text alone", () => {
    assert.strictEqual(errorMessage(`{"error":{"message":"too long","type":"invalid_request_error"}}`), "too long")
    assert.strictEqual(errorMessage(`{"detail":"nope"}`), `{"detail":"nope"}`)
    assert.strictEqual(errorMessage("null"), "null")
    assert.strictEqual(errorMessage("stream disconnected"), "stream disconnected")
  })
})
