import { assert, describe, it } from "@effect/vitest"
import { ChangeId } from "@spool/core"
import { COPILOT_BIN, copilotEnv, TEST_MODEL } from "@spool/testkit/copilotEnv"
import { tempDirectory } from "@spool/testkit/fakeHttpServer"
import { fakeModelServer, Turn as T } from "@spool/testkit/fakeModelServer"
import { preflightConformance } from "@spool/testkit/harnessConformance"
import { runHarnessOnce } from "@spool/testkit/harnessEvents"
import { processesIn, remaining } from "@spool/testkit/processes"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { CopilotHarness } from "../src/index.js"

const changeId = ChangeId.make("001-01_try-copilot")

preflightConformance({
  program: "copilot",
  envVar: "SPOOL_COPILOT_BIN",
  install: "npm install -g @github/copilot",
  installed: COPILOT_BIN,
  layer: (binary, pathEnv) => CopilotHarness.layer({ model: null, allowAll: false, binary, pathEnv, stateDir: "/nonexistent/.copilot" })
})

describe("CopilotHarness", () => {
  it("runs copilot with JSON events and no update, the model as --model and --allow-all as its own, the prompt never on the command line", () => {
    assert.deepStrictEqual(CopilotHarness.commandArgs({ model: null, allowAll: false }), ["--output-format", "json", "--no-auto-update"])
    assert.deepStrictEqual(CopilotHarness.commandArgs({ model: "gpt-5.4", allowAll: true }), [
      "--output-format",
      "json",
      "--no-auto-update",
      "--model",
      "gpt-5.4",
      "--allow-all"
    ])
  })

  it("keeps each run's usage file in copilot's own directory: COPILOT_HOME when absolute, else ~/.copilot", () => {
    assert.strictEqual(CopilotHarness.stateDirOf({ HOME: "/home/me", COPILOT_HOME: "/srv/copilot" }), "/srv/copilot")
    assert.strictEqual(CopilotHarness.stateDirOf({ HOME: "/home/me/", COPILOT_HOME: "relative" }), "/home/me/.copilot")
    assert.strictEqual(CopilotHarness.stateDirOf({ HOME: "/home/me" }), "/home/me/.copilot")
    assert.strictEqual(CopilotHarness.stateDirOf({}), "/.copilot")
  })

  /** A work tree, the fake server answering `turns(workTree)`, and the harness running the real copilot against it alone. */
  const setUp = (turns: (cwd: string) => ReadonlyArray<T>, allowAll: boolean) =>
    Effect.gen(function*() {
      const root = yield* tempDirectory("spool-copilot-")
      const cwd = path.join(root, "work")
      fs.mkdirSync(cwd)
      const server = yield* fakeModelServer(turns(cwd))
      const env = copilotEnv({ baseURL: server.baseURL, root: path.join(root, "home") })
      const stateDir = CopilotHarness.stateDirOf(env)
      const layer = CopilotHarness.layer({ model: TEST_MODEL, allowAll, binary: COPILOT_BIN, pathEnv: process.env.PATH, env, stateDir })
      return { cwd, server, stateDir, layer }
    })

  it.scoped("runs the real copilot: the prompt on stdin reaches the model, its write lands, its text and the tokens of its usage file come back", () =>
    Effect.gen(function*() {
      const { cwd, layer, server, stateDir } = yield* setUp(
        (cwd) => [T.call("create", { path: path.join(cwd, "a.txt"), file_text: "written\n" }, "Writing."), T.text("All done.\n")],
        true
      )
      const all = yield* runHarnessOnce(layer, { prompt: "Write a.txt, please.", changeId, iteration: 2, cwd })
      assert.strictEqual(fs.readFileSync(path.join(cwd, "a.txt"), "utf8"), "written\n")
      assert.strictEqual(all.flatMap((e) => (e._tag === "AgentText" ? [e.text] : [])).join(""), "Writing.\nAll done.\n")
      // Two requests of 100 prompt tokens (30 cached) and 20 completion tokens (5 reasoning), from the usage file.
      assert.deepStrictEqual(all.flatMap((e) => (e._tag === "Usage" ? [e.usage] : [])), [
        { inputTokens: 140, outputTokens: 30, reasoningTokens: 10, cacheReadTokens: 60, cacheWriteTokens: 0, cost: null }
      ])
      assert.deepStrictEqual(all.filter((e) => e._tag === "Failed" || e._tag === "Warning"), [])
      assert.deepStrictEqual(all.at(-1), { _tag: "Exited", exitCode: 0, signal: null } as never)
      assert.strictEqual(server.requests[0]!.model, TEST_MODEL)
      assert.include(server.requests[0]!.messages.filter((m) => m.role === "user").map((m) => m.text).join("\n"), "Write a.txt, please.")
      // The run's private directory for its usage file is gone with the run.
      assert.deepStrictEqual(fs.readdirSync(stateDir).filter((name) => name.startsWith("spool-run-")), [])
    }), 120_000)

  it.scoped("ends the real copilot's run at its first 429, which copilot would wait out and retry, stops copilot, and reads the retry-after from its log and the tokens spent before it", () =>
    Effect.gen(function*() {
      // copilot waits out a retry-after of two minutes by itself, and prints it nowhere.
      const limit = T.limit("Rate limit reached for requests", { "retry-after": "120" })
      const { cwd, layer, server, stateDir } = yield* setUp(
        () => [T.call("bash", { command: "true", description: "Checks." }, "Checking."), limit, limit, limit, limit, limit, limit],
        true
      )
      const all = yield* runHarnessOnce(layer, { prompt: "Go.", changeId, iteration: 1, cwd })
      assert.deepStrictEqual(all.filter((e) => e._tag === "Limited"), [
        { _tag: "Limited", message: "429 Rate limit reached for requests", resetAt: null, retryAfterMs: 120_000, resets: true } as never
      ])
      // The first request's tokens (100 prompt, 30 of them cached; 20 completion, 5 reasoning), from
      // the usage file copilot writes as it is stopped.
      assert.deepStrictEqual(all.flatMap((e) => (e._tag === "Usage" ? [e.usage] : [])), [
        { inputTokens: 70, outputTokens: 15, reasoningTokens: 5, cacheReadTokens: 30, cacheWriteTokens: 0, cost: null }
      ])
      // Read at the first failure: the run ends there, with no exit of copilot's own and no retry made.
      assert.strictEqual(all.at(-1)!._tag, "Limited")
      assert.strictEqual(server.requests.length, 2)
      assert.deepStrictEqual(yield* Effect.promise(() => remaining(() => processesIn(cwd))), [])
      // copilot's log of the run is kept where copilot keeps its logs, in a directory of the run's own.
      const logs = fs.readdirSync(path.join(stateDir, "logs"))
      assert.strictEqual(logs.length, 1)
      assert.match(logs[0]!, /^spool-run-/)
      assert.isTrue(fs.readdirSync(path.join(stateDir, "logs", logs[0]!)).some((name) => name.endsWith(".log")))
    }), 120_000)
})
