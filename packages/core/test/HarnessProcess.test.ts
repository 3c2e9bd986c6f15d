import { NodeContext } from "@effect/platform-node"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type AgentProgram, resolveAgent, resolveProgram } from "../src/harness/AgentProgram.js"
import { splitArgs } from "../src/harness/ArgumentSplit.js"
import { signalOf } from "../src/harness/HarnessProcess.js"

describe("splitArgs", () => {
  it.each([
    ["node agent.mjs", ["node", "agent.mjs"]],
    ["  node   agent.mjs  ", ["node", "agent.mjs"]],
    ["", []],
    ["agent 'two words' \"and more\"", ["agent", "two words", "and more"]],
    ["agent ''", ["agent", ""]],
    ["agent a'b'c", ["agent", "abc"]],
    ["agent two\\ words", ["agent", "two words"]],
    ["agent \"a \\\"quoted\\\" word\"", ["agent", "a \"quoted\" word"]],
    ["agent 'no \\escape'", ["agent", "no \\escape"]],
    ["agent\tx\ny", ["agent", "x", "y"]]
  ])("%j is %j", (text, args) => {
    expect(splitArgs(text)).toEqual(args)
  })

  it("gives null on an unterminated quote", () => {
    expect(splitArgs("agent 'open")).toBeNull()
    expect(splitArgs("agent \"open")).toBeNull()
  })
})

describe("signalOf", () => {
  it("reads the signal a platform error names, SIGKILL when it names none", () => {
    expect(signalOf("process exited: signal SIGTERM")).toBe("SIGTERM")
    expect(signalOf("killed by signal: SIGSEGV")).toBe("SIGSEGV")
    expect(signalOf("the process went away")).toBe("SIGKILL")
  })
})

describe("resolveProgram and resolveAgent", () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "spool-program-")))
  const bin = path.join(dir, "bin")
  fs.mkdirSync(bin)
  fs.writeFileSync(path.join(bin, "agent"), "#!/bin/sh\n", { mode: 0o755 })
  fs.writeFileSync(path.join(bin, "plain"), "not a program\n", { mode: 0o644 })
  fs.mkdirSync(path.join(bin, "folder"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  const failure = <A, E extends { readonly detail: string; readonly reason: string }, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flip(effect).pipe(Effect.map((error) => `${error.reason}: ${error.detail}`))

  it.effect("finds a name on PATH, skipping folders and empty entries, and takes a path with a / as given", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* resolveProgram("agent", `::${path.join(dir, "none")}:${bin}`, "x"), path.join(bin, "agent"))
      assert.strictEqual(yield* resolveProgram(path.join(bin, "agent"), undefined, "x"), path.join(bin, "agent"))
      assert.strictEqual(yield* failure(resolveProgram("folder", bin, "x")), "NotFound: 'folder' was not found on PATH")
      assert.strictEqual(yield* failure(resolveProgram("agent", undefined, "x")), "NotFound: 'agent' was not found on PATH")
      assert.strictEqual(yield* failure(resolveProgram(path.join(dir, "none"), bin, "x")), `NotFound: '${path.join(dir, "none")}' was not found`)
      assert.strictEqual(yield* failure(resolveProgram("plain", bin, "x")), `NotExecutable: '${path.join(bin, "plain")}' is not executable (chmod +x it)`)
    }).pipe(Effect.provide(NodeContext.layer)))

  const agent = (binary: string | null, pathEnv: string): AgentProgram => ({
    harness: "x",
    program: "agent",
    envVar: "SPOOL_X_BIN",
    binary,
    pathEnv,
    install: "install it with `npm install -g x`"
  })

  it.effect("prefers the variable's path to PATH, and says how to install the agent when it is missing", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* resolveAgent(agent(null, bin)), path.join(bin, "agent"))
      assert.strictEqual(yield* resolveAgent(agent(path.join(bin, "agent"), "")), path.join(bin, "agent"))
      assert.strictEqual(
        yield* failure(resolveAgent(agent(null, dir))),
        "NotFound: 'agent' was not found on PATH; install it with `npm install -g x`, or set SPOOL_X_BIN to its path"
      )
      assert.strictEqual(
        yield* failure(resolveAgent(agent(path.join(dir, "none"), bin))),
        `NotFound: SPOOL_X_BIN is '${path.join(dir, "none")}', which does not exist; install it with \`npm install -g x\`, or set SPOOL_X_BIN to its path`
      )
      // Not executable is not missing: no install hint.
      assert.strictEqual(yield* failure(resolveAgent(agent(path.join(bin, "plain"), ""))), `NotExecutable: '${path.join(bin, "plain")}' is not executable (chmod +x it)`)
    }).pipe(Effect.provide(NodeContext.layer)))
})
