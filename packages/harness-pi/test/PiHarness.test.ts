import { assert, describe, it } from "@effect/vitest"
import { ChangeId } from "@spool/core"
import { tempDirectory } from "@spool/testkit/fakeHttpServer"
import { fakeModelServer, Turn as T } from "@spool/testkit/fakeModelServer"
import { preflightConformance } from "@spool/testkit/harnessConformance"
import { runHarnessOnce } from "@spool/testkit/harnessEvents"
import { PI_BIN, piEnv, TEST_MODEL, TEST_MODEL_ID } from "@spool/testkit/piEnv"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { PiHarness } from "../src/index.js"

const changeId = ChangeId.make("001-01_try-pi")

preflightConformance({
  program: "pi",
  envVar: "SPOOL_PI_BIN",
  install: "npm install -g @mariozechner/pi-coding-agent",
  installed: PI_BIN,
  layer: (binary, pathEnv) => PiHarness.layer({ model: null, allowAll: false, binary, pathEnv })
})

describe("PiHarness", () => {
  it("runs pi headless with JSON events and no session file, the model as --model, the prompt never on the command line", () => {
    assert.deepStrictEqual(PiHarness.commandArgs({ model: null }), ["-p", "--mode", "json", "--no-session"])
    assert.deepStrictEqual(PiHarness.commandArgs({ model: "anthropic/claude-sonnet-4-5" }), [
      "-p",
      "--mode",
      "json",
      "--no-session",
      "--model",
      "anthropic/claude-sonnet-4-5"
    ])
  })

  it.scoped("runs the real pi: the prompt on stdin reaches the model, its write lands, its text, tokens and cost come back", () =>
    Effect.gen(function*() {
      const root = yield* tempDirectory("spool-pi-")
      const cwd = path.join(root, "work")
      fs.mkdirSync(cwd)
      const server = yield* fakeModelServer([T.call("write", { path: "a.txt", content: "written\n" }, "Writing."), T.text("All done.\n")])
      const layer = PiHarness.layer({
        model: TEST_MODEL,
        allowAll: false,
        binary: PI_BIN,
        pathEnv: process.env.PATH,
        env: piEnv({ baseURL: server.baseURL, root: path.join(root, "home") })
      })
      const all = yield* runHarnessOnce(layer, { prompt: "Write a.txt, please.", changeId, iteration: 2, cwd })
      assert.strictEqual(fs.readFileSync(path.join(cwd, "a.txt"), "utf8"), "written\n")
      assert.strictEqual(all.flatMap((e) => (e._tag === "AgentText" ? [e.text] : [])).join(""), "Writing.\nAll done.\n")
      const usage = all.flatMap((e) => (e._tag === "Usage" ? [e.usage] : []))
      assert.strictEqual(usage.length, 2)
      assert.isTrue(usage.every((u) => u.inputTokens === 70 && (u.cost ?? 0) > 0))
      assert.deepStrictEqual(all.filter((e) => e._tag === "Failed"), [])
      assert.strictEqual(server.requests[0]!.model, TEST_MODEL_ID)
      assert.include(server.requests[0]!.messages.map((m) => m.text).join("\n"), "Write a.txt, please.")
      // No session file is kept.
      assert.deepStrictEqual(fs.readdirSync(path.join(root, "home", "agent")).filter((f) => f.startsWith("sessions")), [])
    }), 60_000)
})
