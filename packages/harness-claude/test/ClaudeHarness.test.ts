import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ChangeId, type HarnessEvent, HarnessService, judgeCompletion } from "@spool/core"
import {
  byTurn,
  CLAUDE_BIN,
  claudeEnv,
  fakeAnthropicServer,
  FAKE_USAGE,
  Reply,
  type Script,
  tempDirectory
} from "@spool/testkit/fakeAnthropicServer"
import { preflightConformance } from "@spool/testkit/harnessConformance"
import { Chunk, Effect, Exit, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClaudeHarness } from "../src/index.js"

// Each test runs the real claude binary once or twice (about a second a run on an idle machine).
const TIMEOUT = 60_000
const changeId = ChangeId.make("001-01_try-claude")
const PROMISE = "<promise>COMPLETE</promise>"

interface RunOptions {
  readonly script: Script
  readonly prompt?: string
  readonly model?: string | null
  readonly allowAll?: boolean
}

/** Runs one iteration through the layer against a fresh fake server, in a fresh working directory. */
const runOnce = (options: RunOptions) =>
  Effect.gen(function*() {
    const root = yield* tempDirectory()
    const cwd = path.join(root, "work")
    fs.mkdirSync(cwd)
    const server = yield* fakeAnthropicServer(options.script)
    const layer = ClaudeHarness.layer({
      model: options.model ?? null,
      allowAll: options.allowAll ?? false,
      binary: CLAUDE_BIN,
      pathEnv: process.env.PATH,
      runsAsRoot: process.getuid?.() === 0,
      isSandbox: undefined,
      env: claudeEnv({ baseURL: server.baseURL, root: path.join(root, "sandbox") })
    })
    const collected = yield* HarnessService.pipe(
      Effect.flatMap((harness) =>
        Stream.runCollect(harness.run({ prompt: options.prompt ?? "Do the task.", changeId, iteration: 3, cwd }))
      ),
      Effect.provide(layer),
      Effect.provide(NodeContext.layer)
    )
    const events = Chunk.toReadonlyArray(collected)
    const of = <K extends HarnessEvent["_tag"]>(tag: K) =>
      events.filter((e): e is Extract<HarnessEvent, { _tag: K }> => e._tag === tag)
    return {
      cwd,
      events,
      requests: server.requests,
      exited: events.at(-1),
      output: of("Output").map((e) => new TextDecoder().decode(e.bytes)).join(""),
      display: of("Display").map((e) => e.text).join(""),
      agentText: of("AgentText").map((e) => e.text).join(""),
      usage: of("Usage").map((e) => e.usage),
      warnings: of("Warning").map((e) => e.message),
      failed: of("Failed").map((e) => e.message),
      limited: of("Limited")
    }
  })

describe("claude harness, real binary against a fake Anthropic server", () => {
  it.scopedLive("a Write tool call creates the file; only the agent's own text carries the promise, once", () =>
    Effect.gen(function*() {
      // The written file holds a promise at the start of a line: it shows up in the raw output
      // (tool input and tool result) and must not count.
      const content = `hello from the agent\n${PROMISE}\n`
      const result = yield* runOnce({
        prompt: "PROMPT-MARKER: write hello.txt, then print the promise.",
        allowAll: true,
        script: byTurn(Reply.write("hello.txt", content), Reply.text("All done.\n", PROMISE))
      })
      assert.deepStrictEqual(result.exited, { _tag: "Exited", exitCode: 0, signal: null })
      assert.strictEqual(fs.readFileSync(path.join(result.cwd, "hello.txt"), "utf8"), content)
      assert.isAbove(result.output.split(PROMISE).length, 3)
      assert.strictEqual(result.agentText, `Writing the file.\nAll done.\n${PROMISE}\n`)
      assert.isTrue(judgeCompletion(result.agentText, { token: "COMPLETE", prompt: "" }).claimed)
      assert.include(result.display, "→ Write hello.txt\n")
      assert.include(result.display, "All done.")
      // Two model requests, totalled once from the final result.
      assert.strictEqual(result.requests.length, 2)
      assert.strictEqual(result.usage.length, 1)
      assert.deepInclude(result.usage[0], {
        inputTokens: 2 * FAKE_USAGE.input_tokens,
        outputTokens: 2 * FAKE_USAGE.output_tokens,
        reasoningTokens: 0,
        cacheReadTokens: 2 * FAKE_USAGE.cache_read_input_tokens,
        cacheWriteTokens: 2 * FAKE_USAGE.cache_creation_input_tokens
      })
      assert.isAbove(result.usage[0]?.cost ?? 0, 0)
      assert.deepStrictEqual(result.warnings, [])
      assert.deepStrictEqual(result.failed, [])
    }), TIMEOUT)

  it.scopedLive("sends the chosen model and makes no other request", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({ model: "chosen-model", script: byTurn(Reply.text("Nothing to do.")) })
      assert.strictEqual(result.exited?._tag === "Exited" && result.exited.exitCode, 0)
      assert.deepStrictEqual(result.requests.map((r) => [r.method, r.path, r.model]), [["POST", "/v1/messages?beta=true", "chosen-model"]])
      assert.strictEqual(result.agentText, "Nothing to do.\n")
    }), TIMEOUT)

  it.scopedLive("a write needing permission is denied with one Warning, unless allowAll", () =>
    Effect.gen(function*() {
      const script = byTurn(Reply.write("asked.txt", "x\n"), Reply.text("Done."))
      const denied = yield* runOnce({ script })
      assert.strictEqual(denied.exited?._tag === "Exited" && denied.exited.exitCode, 0)
      assert.isFalse(fs.existsSync(path.join(denied.cwd, "asked.txt")))
      assert.strictEqual(denied.warnings.length, 1)
      assert.match(denied.warnings[0]!, /^claude denied a tool call that needs permission \(Write asked\.txt\)/)
      assert.include(denied.warnings[0], "--allow-all")
      assert.include(denied.display, "✗ Write asked.txt: permission denied\n")
      assert.include(denied.output, `"permission_denied"`)

      const allowed = yield* runOnce({ script, allowAll: true })
      assert.strictEqual(fs.readFileSync(path.join(allowed.cwd, "asked.txt"), "utf8"), "x\n")
      assert.deepStrictEqual(allowed.warnings, [])
    }), TIMEOUT)

  it.scopedLive("a model error (HTTP 400) is Failed with the API error text and a non-zero exit code", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({ script: () => Reply.error("the fake model refuses this request") })
      assert.notStrictEqual(result.exited?._tag === "Exited" ? result.exited.exitCode : 0, 0)
      assert.strictEqual(result.failed.length, 1)
      assert.match(result.failed[0]!, /^API Error: 400 .*the fake model refuses this request/)
      assert.include(result.display, "✗ API Error: 400")
      assert.strictEqual(result.agentText, "")
      assert.deepStrictEqual(result.limited, [])
    }), TIMEOUT)

  it.scopedLive("a rate limit (HTTP 429) is Failed and Limited", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({ script: () => Reply.error("slow down", 429) })
      assert.strictEqual(result.failed.length, 1)
      assert.include(result.failed[0], "slow down")
      assert.strictEqual(result.limited.length, 1)
      assert.deepInclude(result.limited[0], { resetAt: null, retryAfterMs: null, resets: true })
      assert.include(result.limited[0]?.message, "429")
    }), TIMEOUT)

  it.scopedLive("a 300 KiB prompt reaches the model whole", () =>
    Effect.gen(function*() {
      const filler = "A line of the prompt with \"quotes\", $dollars and `backticks`.\n"
      const body = filler.repeat(Math.ceil((300 * 1024) / filler.length))
      const prompt = `BEGIN-OF-PROMPT\n${body}END-OF-PROMPT`
      const result = yield* runOnce({ prompt, script: byTurn(Reply.text("Read it all.")) })
      assert.strictEqual(result.exited?._tag === "Exited" && result.exited.exitCode, 0)
      const user = result.requests[0]?.messages.filter((m) => m.role === "user") ?? []
      assert.isAbove(prompt.length, 300 * 1024)
      assert.include(user.flatMap((m) => m.texts), prompt)
    }), TIMEOUT)
})

describe("claude harness, without running claude", () => {
  const options = {
    model: null,
    allowAll: false,
    binary: CLAUDE_BIN,
    pathEnv: undefined,
    runsAsRoot: false,
    isSandbox: undefined
  } satisfies ClaudeHarness.ClaudeHarnessOptions
  const preflight = (overrides: Partial<ClaudeHarness.ClaudeHarnessOptions>) =>
    HarnessService.pipe(
      Effect.flatMap((harness) => harness.preflight),
      Effect.provide(ClaudeHarness.layer({ ...options, ...overrides })),
      Effect.provide(NodeContext.layer)
    )

  preflightConformance({
    program: "claude",
    envVar: "SPOOL_CLAUDE_BIN",
    install: "npm install -g @anthropic-ai/claude-code",
    installed: CLAUDE_BIN,
    layer: (binary, pathEnv) => ClaudeHarness.layer({ ...options, binary, pathEnv })
  })

  it.scopedLive("preflight refuses --allow-all as root unless IS_SANDBOX=1, saying what to do", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(preflight({ allowAll: true, runsAsRoot: true }))
      assert.strictEqual(failure.reason, "Refused")
      assert.strictEqual(
        failure.message,
        "claude harness cannot start: --allow-all: claude refuses --dangerously-skip-permissions as root; " +
          "set IS_SANDBOX=1 if this machine is a sandbox, or run as a non-root user"
      )
      assert.strictEqual(Exit.isSuccess(yield* Effect.exit(preflight({ allowAll: true, runsAsRoot: true, isSandbox: "true" }))), false)
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(preflight({ allowAll: true, runsAsRoot: true, isSandbox: "1" }))))
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(preflight({ allowAll: false, runsAsRoot: true }))))
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(preflight({ allowAll: true, runsAsRoot: false }))))
    }))

  it("builds the command line without the prompt, with --dangerously-skip-permissions only when allowed", () => {
    assert.deepStrictEqual(ClaudeHarness.commandArgs({ model: null, allowAll: false }), [
      "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence"
    ])
    assert.deepStrictEqual(ClaudeHarness.commandArgs({ model: "claude-sonnet-4-5", allowAll: true }), [
      "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence",
      "--model", "claude-sonnet-4-5", "--dangerously-skip-permissions"
    ])
  })
})
