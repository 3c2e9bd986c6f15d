import { assert, describe, it } from "@effect/vitest"
import { ChangeId } from "@spool/core"
import { fakeGeminiServer, GEMINI_BIN, geminiEnv, TEST_MODEL, Turn as T } from "@spool/testkit/fakeGeminiServer"
import { tempDirectory } from "@spool/testkit/fakeHttpServer"
import { preflightConformance } from "@spool/testkit/harnessConformance"
import { runHarnessOnce } from "@spool/testkit/harnessEvents"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { GeminiHarness } from "../src/index.js"

const changeId = ChangeId.make("001-01_try-gemini")

preflightConformance({
  program: "gemini",
  envVar: "SPOOL_GEMINI_BIN",
  install: "npm install -g @google/gemini-cli",
  installed: GEMINI_BIN,
  layer: (binary, pathEnv) => GeminiHarness.layer({ model: null, allowAll: false, binary, pathEnv })
})

describe("GeminiHarness", () => {
  it("passes the model as -m and --allow-all as --yolo, the prompt never on the command line", () => {
    assert.deepStrictEqual(GeminiHarness.commandArgs({ model: null, allowAll: false }), ["--output-format", "stream-json"])
    assert.deepStrictEqual(GeminiHarness.commandArgs({ model: "gemini-2.5-pro", allowAll: true }), [
      "--output-format",
      "stream-json",
      "-m",
      "gemini-2.5-pro",
      "--yolo"
    ])
  })

  it.scoped("runs the real gemini: the prompt on stdin reaches the model, its write lands, its text and tokens come back", () =>
    Effect.gen(function*() {
      const root = yield* tempDirectory("spool-gemini-")
      const cwd = path.join(root, "work")
      fs.mkdirSync(cwd)
      const server = yield* fakeGeminiServer([T.write(path.join(cwd, "a.txt"), "written\n"), T.text("All done.\n")])
      const layer = GeminiHarness.layer({
        model: TEST_MODEL,
        allowAll: true,
        binary: GEMINI_BIN,
        pathEnv: process.env.PATH,
        env: geminiEnv({ baseURL: server.baseURL, root: path.join(root, "home") })
      })
      const all = yield* runHarnessOnce(layer, { prompt: "Write a.txt, please.", changeId, iteration: 2, cwd })
      assert.strictEqual(fs.readFileSync(path.join(cwd, "a.txt"), "utf8"), "written\n")
      assert.strictEqual(all.flatMap((e) => (e._tag === "AgentText" ? [e.text] : [])).join(""), "Writing the file.\nAll done.\n")
      assert.deepStrictEqual(all.flatMap((e) => (e._tag === "Usage" ? [e.usage.inputTokens + e.usage.cacheReadTokens] : [])), [200])
      assert.deepStrictEqual(all.filter((e) => e._tag === "Failed"), [])
      assert.deepStrictEqual(all.at(-1), { _tag: "Exited", exitCode: 0, signal: null } as never)
      assert.strictEqual(server.requests[0]!.model, TEST_MODEL)
      assert.include(server.requests[0]!.userTexts.join("\n"), "Write a.txt, please.")
    }), 60_000)
})
