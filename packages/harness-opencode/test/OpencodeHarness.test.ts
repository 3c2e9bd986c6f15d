import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ChangeId, type HarnessEvent, HarnessService, judgeCompletion } from "@spool/core"
import {
  FAKE_PROVIDER,
  fakeModelServer,
  OPENCODE_BIN,
  opencodeEnv,
  tempDirectory,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeModelServer"
import { preflightConformance } from "@spool/testkit/harnessConformance"
import { Chunk, Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { OpencodeHarness } from "../src/index.js"

// Each test runs the real opencode binary once or twice (about 4 to 9 s a run).
const TIMEOUT = 60_000
const changeId = ChangeId.make("001-01_try-opencode")
const PROMISE = "<promise>COMPLETE</promise>"

interface RunOptions {
  /** The model's replies, given the agent's working directory (tool calls need absolute paths). */
  readonly turns: (cwd: string) => ReadonlyArray<Turn>
  readonly prompt?: string
  readonly model?: string | null
  readonly models?: ReadonlyArray<string>
  readonly allowAll?: boolean
  readonly config?: Record<string, unknown>
}

/** Runs one iteration through the layer against a fresh fake server, in a fresh working directory. */
const runOnce = (options: RunOptions) =>
  Effect.gen(function*() {
    const root = yield* tempDirectory()
    const cwd = path.join(root, "work")
    fs.mkdirSync(cwd)
    const server = yield* fakeModelServer(options.turns(cwd))
    const layer = OpencodeHarness.layer({
      model: options.model ?? null,
      allowAll: options.allowAll ?? false,
      binary: OPENCODE_BIN,
      pathEnv: process.env.PATH,
      env: opencodeEnv({
        baseURL: server.baseURL,
        root: path.join(root, "sandbox"),
        ...(options.models === undefined ? {} : { models: options.models }),
        ...(options.config === undefined ? {} : { config: options.config })
      })
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
      warnings: of("Warning").map((e) => e.message)
    }
  })

describe("opencode harness, real binary against a fake model", () => {
  it.scopedLive("a write tool call creates the file, and the final text carries the promise once", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({
        prompt: "PROMPT-MARKER: write hello.txt, then print the promise.",
        turns: (cwd) => [T.write(path.join(cwd, "hello.txt"), "hello from the agent\n"), T.text("All done.\n", PROMISE)]
      })
      assert.deepStrictEqual(result.exited, { _tag: "Exited", exitCode: 0, signal: null })
      assert.strictEqual(fs.readFileSync(path.join(result.cwd, "hello.txt"), "utf8"), "hello from the agent\n")
      assert.isTrue(judgeCompletion(result.agentText, { token: "COMPLETE", prompt: "" }).claimed)
      assert.strictEqual(result.agentText.split(PROMISE).length, 2)
      assert.notInclude(result.agentText, "PROMPT-MARKER")
      assert.notInclude(result.agentText, "Wrote file successfully")
      assert.include(result.display, "→ write hello.txt\n")
      assert.include(result.display, "All done.")
      assert.include(result.output, `"type":"step_finish"`)
      // Two model requests: the tool call, then the reply to its result; each reports its own usage.
      assert.strictEqual(result.usage.length, 2)
      for (const usage of result.usage) {
        assert.deepInclude(usage, { inputTokens: 70, outputTokens: 15, reasoningTokens: 5, cacheReadTokens: 30, cacheWriteTokens: 0 })
        assert.isAbove(usage.cost ?? 0, 0)
      }
      assert.deepStrictEqual(result.warnings, [])
    }), TIMEOUT)

  it.scopedLive("sends the chosen model and makes no title request", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({
        models: ["default-model", "chosen-model"],
        model: `${FAKE_PROVIDER}/chosen-model`,
        turns: () => [T.text("Nothing to do.")]
      })
      assert.strictEqual(result.exited?._tag === "Exited" && result.exited.exitCode, 0)
      // One scripted turn, so exactly one request: a title request would be a second one.
      assert.strictEqual(result.requests.length, 1)
      assert.strictEqual(result.requests[0]?.model, "chosen-model")
      assert.isFalse(result.requests[0]?.isTitle)
      assert.strictEqual(result.agentText, "Nothing to do.")
    }), TIMEOUT)

  it.scopedLive("a permission opencode would ask for is rejected with a Warning, unless allowAll", () =>
    Effect.gen(function*() {
      const ask = { permission: { "*": "ask" } }
      const turns = (cwd: string) => [T.write(path.join(cwd, "asked.txt"), "x\n"), T.text("Done.")]
      const rejected = yield* runOnce({ config: ask, turns })
      assert.isFalse(fs.existsSync(path.join(rejected.cwd, "asked.txt")))
      assert.strictEqual(rejected.warnings.length, 1)
      assert.match(rejected.warnings[0]!, /^opencode auto-rejected a permission request \(.*asked\.txt\)/)
      assert.include(rejected.warnings[0], "--allow-all")
      assert.include(rejected.output, "auto-rejecting")

      const allowed = yield* runOnce({ config: ask, allowAll: true, turns })
      assert.strictEqual(fs.readFileSync(path.join(allowed.cwd, "asked.txt"), "utf8"), "x\n")
      assert.deepStrictEqual(allowed.warnings, [])
    }), TIMEOUT)

  it.scopedLive("a model error ends with a non-zero exit code and the error in the output", () =>
    Effect.gen(function*() {
      const result = yield* runOnce({ turns: () => [T.error("the fake model refuses this request")] })
      assert.strictEqual(result.exited?._tag, "Exited")
      assert.notStrictEqual(result.exited?._tag === "Exited" ? result.exited.exitCode : 0, 0)
      assert.include(result.output, "the fake model refuses this request")
      assert.include(result.display, "✗ opencode error: the fake model refuses this request")
      assert.strictEqual(result.agentText, "")
    }), TIMEOUT)

  it.scopedLive("a 300 KiB prompt reaches the model whole", () =>
    Effect.gen(function*() {
      const filler = "A line of the prompt with \"quotes\", $dollars and `backticks`.\n"
      const body = filler.repeat(Math.ceil((300 * 1024) / filler.length))
      const prompt = `BEGIN-OF-PROMPT\n${body}END-OF-PROMPT`
      const result = yield* runOnce({ prompt, turns: () => [T.text("Read it all.")] })
      assert.strictEqual(result.exited?._tag === "Exited" && result.exited.exitCode, 0)
      const user = result.requests[0]?.messages.filter((m) => m.role === "user") ?? []
      assert.strictEqual(user.length, 1)
      assert.isAbove(prompt.length, 300 * 1024)
      assert.strictEqual(user[0]?.text, prompt)
    }), TIMEOUT)
})

describe("opencode harness, without running opencode", () => {
  preflightConformance({
    program: "opencode",
    envVar: "SPOOL_OPENCODE_BIN",
    install: "npm install -g opencode-ai",
    installed: OPENCODE_BIN,
    layer: (binary, pathEnv) => OpencodeHarness.layer({ model: null, allowAll: false, binary, pathEnv })
  })

  it("builds the command line without the prompt, with a title, and --auto only when allowed", () => {
    const request = { changeId, iteration: 2 }
    assert.deepStrictEqual(OpencodeHarness.commandArgs({ model: null, allowAll: false }, request), [
      "run", "--format", "json", "--title", "spool ralph 001-01_try-opencode #2"
    ])
    assert.deepStrictEqual(OpencodeHarness.commandArgs({ model: "anthropic/claude-sonnet-4", allowAll: true }, request), [
      "run", "--format", "json", "--title", "spool ralph 001-01_try-opencode #2", "--model", "anthropic/claude-sonnet-4", "--auto"
    ])
  })
})
