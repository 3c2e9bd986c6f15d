import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { main } from "../src/Cli.js"
import { exitCodeOf } from "../src/ExitCode.js"
import * as Invocation from "../src/Invocation.js"
import * as ProcessExecutor from "../src/ProcessExecutor.js"
import * as TerminalReporter from "../src/TerminalReporter.js"
import { baseEnv, makeWorkspace, scriptedAgent, stateDir } from "./support.js"

const change = "001-01_greeting-cli"
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]
const node = (source: string) => `${process.execPath} -e "${source}"`

/**
 * `spool <args>` run in this process, as `bin.ts` runs it but on layers of the test's own: started
 * in `cwd` with an environment of its own, its stdout and stderr captured; the exit code as `bin.ts` decides it.
 */
const spool = (args: ReadonlyArray<string>, cwd: string) =>
  Effect.gen(function*() {
    const env = baseEnv()
    const terminal = TerminalReporter.capture(env)
    const outcome = yield* main(["node", "spool", ...args]).pipe(
      Effect.provide(Layer.mergeAll(Invocation.layerTest(cwd, { env }), terminal.layer, ProcessExecutor.layer(env))),
      Effect.provide(NodeContext.layer)
    )
    return { code: exitCodeOf(outcome), stdout: terminal.stdout(), stderr: terminal.stderr() }
  })

const linesOf = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

describe("spool in process (captured terminal, an invocation of the test's own)", () => {
  it.live("runs the scripted agent to completion in the invocation's directory: exit 0", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const result = yield* spool(["ralph", "Do the tasks.", "--change", "001-01", ...harness(`node ${scriptedAgent}`)], root)
      expect(result.code, result.stderr).toBe(0)
      const lines = linesOf(result.stdout)
      expect(lines[0]).toMatch(/^=== spool ralph: iteration 1\/20 /)
      expect(lines).toContain("[agent] task 1.1 done")
      expect(lines.find((line) => line.startsWith("--- iteration 2:"))).toMatch(/exit 1 \|.*-> failed$/)
      expect(lines).toContain("complete: the promise was accepted at iteration 4")
      expect(existsSync(join(stateDir(root, change), "state.json"))).toBe(true)
    }))

  it.live("stops at --max-iterations without the promise: exit 3", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const result = yield* spool(["ralph", "x", "--change", "001-01", "--max-iterations", "2", ...harness(node("console.log('still working')"))], root)
      expect(result.code, result.stderr).toBe(3)
      const lines = linesOf(result.stdout)
      expect(lines.filter((line) => line === "still working")).toHaveLength(2)
      expect(lines.filter((line) => line.startsWith("=== spool ralph: iteration "))).toHaveLength(2)
      expect(lines[lines.length - 1]).toBe("stopped: --max-iterations (2) reached without the completion promise")
    }))

  it.live("a usage error: one spool: line naming the flags, nothing on stdout, exit 2", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const args = ["ralph", "x", "--change", "001-01", "--min-iterations", "5", "--max-iterations", "3", ...harness(node(""))]
      const result = yield* spool(args, root)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe("")
      expect(linesOf(result.stderr)).toEqual(["spool: --min-iterations (5) must not be above --max-iterations (3)"])
      expect(existsSync(stateDir(root, change))).toBe(false)
    }))

  it.live("help goes to the captured stdout: exit 0", () =>
    Effect.gen(function*() {
      const result = yield* spool(["--version"], makeWorkspace({ git: false }))
      expect(result).toEqual({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/), stderr: "" })
    }))
})
