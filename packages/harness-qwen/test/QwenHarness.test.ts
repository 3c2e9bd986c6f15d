import { assert, describe, it } from "@effect/vitest"
import { agentHosts, ChangeId, noSettings } from "@spool/core"
import { tempDirectory } from "@spool/testkit/fakeHttpServer"
import { fakeModelServer, Turn as T } from "@spool/testkit/fakeModelServer"
import { preflightConformance } from "@spool/testkit/harnessConformance"
import { runHarnessOnce } from "@spool/testkit/harnessEvents"
import { QWEN_BIN, qwenEnv, TEST_MODEL } from "@spool/testkit/qwenEnv"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { QwenHarness } from "../src/index.js"

const changeId = ChangeId.make("001-01_try-qwen")

preflightConformance({
  program: "qwen",
  envVar: "SPOOL_QWEN_BIN",
  install: "npm install -g @qwen-code/qwen-code",
  installed: QWEN_BIN,
  layer: (binary, pathEnv) => QwenHarness.layer({ model: null, allowAll: false, binary, pathEnv })
})

describe("QwenHarness", () => {
  it("passes the model as -m and --allow-all as --yolo, the prompt never on the command line", () => {
    assert.deepStrictEqual(QwenHarness.commandArgs({ model: null, allowAll: false }), ["-o", "stream-json"])
    assert.deepStrictEqual(QwenHarness.commandArgs({ model: "qwen3-coder-plus", allowAll: true }), ["-o", "stream-json", "-m", "qwen3-coder-plus", "--yolo"])
  })

  it("has qwen wait out a limit and say so, which is how spool sees one", () => {
    assert.deepStrictEqual(QwenHarness.env, { QWEN_CODE_UNATTENDED_RETRY: "1" })
  })

  it("lets qwen reach its providers' hosts under --sandbox, or its base URL's host in their place", () => {
    const hosts = (env: Record<string, string>) => agentHosts(QwenHarness.sandboxNeeds, noSettings, env)
    assert.include(hosts({}), "dashscope.aliyuncs.com")
    assert.include(hosts({}), "chat.qwen.ai")
    assert.include(hosts({}), "api.openai.com")
    assert.deepStrictEqual(hosts({ OPENAI_BASE_URL: "http://127.0.0.1:4000/v1" }), ["127.0.0.1:4000"])
    assert.deepStrictEqual(hosts({ ANTHROPIC_BASE_URL: "https://gw.example.com" }), ["gw.example.com"])
    assert.deepStrictEqual(QwenHarness.sandboxNeeds.stateDirs, [".qwen"])
    assert.include(QwenHarness.sandboxNeeds.stateEnv!, "QWEN_HOME")
  })

  it.scoped("runs the real qwen: the prompt on stdin reaches the model, its write lands, its text and tokens come back", () =>
    Effect.gen(function*() {
      const root = yield* tempDirectory("spool-qwen-")
      const cwd = path.join(root, "work")
      fs.mkdirSync(cwd)
      const server = yield* fakeModelServer([
        T.call("write_file", { file_path: path.join(cwd, "a.txt"), content: "written\n" }, "Writing the file."),
        T.text("All done.\n")
      ])
      const layer = QwenHarness.layer({
        model: TEST_MODEL,
        allowAll: true,
        binary: QWEN_BIN,
        pathEnv: process.env.PATH,
        env: qwenEnv({ baseURL: server.baseURL, root: path.join(root, "home") })
      })
      const all = yield* runHarnessOnce(layer, { prompt: "Write a.txt, please.", changeId, iteration: 2, cwd })
      assert.strictEqual(fs.readFileSync(path.join(cwd, "a.txt"), "utf8"), "written\n")
      assert.strictEqual(all.flatMap((e) => (e._tag === "AgentText" ? [e.text] : [])).join(""), "Writing the file.\nAll done.\n")
      assert.deepStrictEqual(all.flatMap((e) => (e._tag === "Usage" ? [e.usage.inputTokens + e.usage.cacheReadTokens] : [])), [200])
      assert.deepStrictEqual(all.filter((e) => e._tag === "Failed" || e._tag === "Limited"), [])
      assert.deepStrictEqual(all.at(-1), { _tag: "Exited", exitCode: 0, signal: null } as never)
      assert.deepStrictEqual(server.requests.map((r) => r.model), [TEST_MODEL, TEST_MODEL])
      assert.include(server.requests[0]!.messages.filter((m) => m.role === "user").map((m) => m.text).join("\n"), "Write a.txt, please.")
    }), 120_000)
})
