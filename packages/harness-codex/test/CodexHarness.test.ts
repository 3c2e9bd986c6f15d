import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ChangeId, type HarnessEvent, HarnessService, judgeCompletion } from "@spool/core"
import {
  CODEX_BIN,
  codexEnv,
  fakeResponsesServer,
  tempDirectory,
  TEST_MODEL,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeResponsesServer"
import { preflightConformance } from "@spool/testkit/harnessConformance"
import { processesMentioning } from "@spool/testkit/processes"
import { Chunk, Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { CodexHarness } from "../src/index.js"

// Each test runs the real codex binary once (about half a second a run on an idle machine).
const TIMEOUT = 60_000
const changeId = ChangeId.make("001-01_try-codex")
const PROMISE = "<promise>COMPLETE</promise>"

interface RunOptions {
  readonly turns: ReadonlyArray<Turn>
  readonly prompt?: string
  readonly model?: string | null
  readonly allowAll?: boolean
  /** Stops reading (and so stops codex) at the first event this accepts. */
  readonly until?: (event: HarnessEvent, cwd: string) => boolean
}

/** Runs one iteration through the layer against a fresh fake server, in a fresh working directory. */
const runOnce = (options: RunOptions) =>
  Effect.gen(function*() {
    const root = yield* tempDirectory()
    const cwd = path.join(root, "work")
    fs.mkdirSync(cwd)
    const server = yield* fakeResponsesServer(options.turns)
    const layer = CodexHarness.layer({
      model: options.model === undefined ? TEST_MODEL : options.model,
      allowAll: options.allowAll ?? false,
      binary: CODEX_BIN,
      pathEnv: process.env.PATH,
      env: codexEnv({ baseURL: server.baseURL, root })
    })
    const collected = yield* HarnessService.pipe(
      Effect.flatMap((harness) => {
        const events = harness.run({ prompt: options.prompt ?? "Do the task.", changeId, iteration: 3, cwd })
        return Stream.runCollect(options.until === undefined ? events : Stream.takeUntil(events, (event) => options.until!(event, cwd)))
      }),
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
      failed: of("Failed").map((e) => e.message)
    }
  })

describe("codex harness, real binary against a fake Responses server", () => {
  it.scopedLive("a shell tool call creates the file in the work tree, and the final message carries the promise once", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({
        prompt: "PROMPT-MARKER: write hello.txt, then print the promise.",
        turns: [T.shell("printf 'hello\\n' > hello.txt", "Writing the file."), T.text("All done.\n", PROMISE)]
      })
      assert.deepStrictEqual(result.exited, { _tag: "Exited", exitCode: 0, signal: null })
      assert.strictEqual(fs.readFileSync(path.join(result.cwd, "hello.txt"), "utf8"), "hello\n")
      assert.strictEqual(result.agentText, `Writing the file.\nAll done.\n${PROMISE}\n`)
      assert.isTrue(judgeCompletion(result.agentText, { token: "COMPLETE", prompt: "" }).claimed)
      assert.include(result.display, "→ $ printf 'hello\\n' > hello.txt (exit 0)\n")
      // The tool's result went back to the model in a second request.
      assert.strictEqual(result.requests.length, 2)
      assert.include(result.requests[0]!.tools, "exec_command")
      assert.include(result.requests[1]!.toolOutputs.join(""), "exited with code 0")
      // One turn, two requests of 100 input (30 cached) and 20 output (5 reasoning) tokens each.
      assert.deepStrictEqual(result.usage, [
        { inputTokens: 140, outputTokens: 30, reasoningTokens: 10, cacheReadTokens: 60, cacheWriteTokens: 0, cost: null }
      ])
      assert.deepStrictEqual(result.failed, [])
    }), TIMEOUT)

  it.scopedLive("sends the chosen model, and shows each file a patch changes", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({
        model: "gpt-5.5-chosen",
        turns: [T.patch("*** Begin Patch\n*** Add File: notes/a.txt\n+patched\n*** End Patch\n"), T.text("Patched.")]
      })
      assert.strictEqual(result.exited?._tag === "Exited" && result.exited.exitCode, 0)
      assert.deepStrictEqual(result.requests.map((r) => r.model), ["gpt-5.5-chosen", "gpt-5.5-chosen"])
      assert.strictEqual(fs.readFileSync(path.join(result.cwd, "notes", "a.txt"), "utf8"), "patched\n")
      assert.include(result.display, "→ add notes/a.txt\n")
      assert.strictEqual(result.agentText, "Patched.\n")
    }), TIMEOUT)

  it.scopedLive("a model error (HTTP 400) is a Failed run carrying the API's message", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({ turns: [T.error("bad request: context too long")] })
      assert.strictEqual(result.exited?._tag, "Exited")
      assert.notStrictEqual(result.exited?._tag === "Exited" ? result.exited.exitCode : 0, 0)
      assert.deepStrictEqual(result.failed, ["bad request: context too long"])
      assert.include(result.display, "✗ codex error: bad request: context too long")
      assert.strictEqual(result.agentText, "")
      assert.deepStrictEqual(result.usage, [])
    }), TIMEOUT)

  it.scopedLive("a 300 KiB prompt reaches the model whole", () =>
    Effect.gen(function*() {
      const filler = "A line of the prompt with \"quotes\", $dollars and `backticks`.\n"
      const body = filler.repeat(Math.ceil((300 * 1024) / filler.length))
      const prompt = `BEGIN-OF-PROMPT\n${body}END-OF-PROMPT`
      const result = yield* runOnce({ prompt, turns: [T.text("Read it all.")] })
      assert.strictEqual(result.exited?._tag === "Exited" && result.exited.exitCode, 0)
      assert.isAbove(prompt.length, 300 * 1024)
      assert.strictEqual(result.requests.length, 1)
      assert.include(result.requests[0]!.userTexts, prompt)
    }), TIMEOUT)

  it.scopedLive("stopping the run stops codex's wrapper and its native child", () =>
    Effect.gen(function*() {
      let running: ReturnType<typeof processesMentioning> = []
      const result = yield* runOnce({
        turns: [T.stall()],
        until: (event, cwd) => {
          const started = event._tag === "Output" && new TextDecoder().decode(event.bytes).includes(`"turn.started"`)
          if (started) running = processesMentioning(cwd)
          return started
        }
      })
      assert.notStrictEqual(result.exited?._tag, "Exited")
      // The Node wrapper and the native binary both carry `-C <cwd>` on their command lines.
      assert.isAtLeast(running.length, 2)
      assert.isTrue(running.some((p) => p.cmdline.includes("vendor/")))
      assert.deepStrictEqual(processesMentioning(result.cwd), [])
    }), TIMEOUT)
})

describe("codex harness, without running codex", () => {
  preflightConformance({
    program: "codex",
    envVar: "SPOOL_CODEX_BIN",
    install: "npm install -g @openai/codex",
    installed: CODEX_BIN,
    layer: (binary, pathEnv) => CodexHarness.layer({ model: null, allowAll: false, binary, pathEnv })
  })

  it("builds the command line: prompt on stdin, the workspace-write sandbox unless everything is allowed", () => {
    assert.deepStrictEqual(CodexHarness.commandArgs({ model: null, allowAll: false }, { cwd: "/repo" }), [
      "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-C", "/repo", "--sandbox", "workspace-write", "-"
    ])
    assert.deepStrictEqual(CodexHarness.commandArgs({ model: "gpt-5.5", allowAll: true }, { cwd: "/repo" }), [
      "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-C", "/repo", "--dangerously-bypass-approvals-and-sandbox", "-m", "gpt-5.5", "-"
    ])
  })
})
