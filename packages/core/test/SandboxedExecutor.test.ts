import { Command, CommandExecutor } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { type Sandbox, type SandboxCommand, sandboxedExecutor, SandboxError } from "../src/sandbox/Sandbox.js"
import type { SandboxRules } from "../src/sandbox/SandboxPolicy.js"

const rules: SandboxRules = {
  allowWrite: ["/work"],
  denyWrite: [],
  denyRead: [],
  hosts: [],
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ONLY: "from the rules" }
}

/** A sandbox that runs the command as `env`, printing the environment it would start with, and records what it was asked. */
const recording = (asked: Array<{ command: SandboxCommand; rules: SandboxRules }>): Sandbox["Type"] => ({
  runtime: "test",
  wrap: (command, given) =>
    Effect.sync(() => {
      asked.push({ command, rules: given })
      return { command: "env", args: [], env: { ...command.env, WRAPPED: "yes" } }
    })
})

const refusing: Sandbox["Type"] = { runtime: "test", wrap: () => Effect.fail(new SandboxError({ message: "no namespaces here" })) }

const output = (executor: CommandExecutor.CommandExecutor, command: Command.Command) =>
  Effect.scoped(Effect.gen(function*() {
    const proc = yield* executor.start(command)
    const text = yield* proc.stdout.pipe(Stream.decodeText(), Stream.mkString)
    return { text, code: yield* proc.exitCode }
  }))

describe("sandboxedExecutor", () => {
  it.effect("starts each command as the sandbox wraps it, with the rules' environment and the command's own, and nothing of this process's", () =>
    Effect.gen(function*() {
      const base = yield* CommandExecutor.CommandExecutor
      const asked: Array<{ command: SandboxCommand; rules: SandboxRules }> = []
      process.env.SPOOL_TEST_LEAK = "leaked"
      const command = Command.make("agent", "--flag", "two words").pipe(
        Command.workingDirectory("/tmp"),
        Command.env({ SPOOL_ITERATION: "3" }),
        Command.stdin(Stream.empty)
      )
      const { text, code } = yield* output(sandboxedExecutor(base, recording(asked), rules), command)
      delete process.env.SPOOL_TEST_LEAK
      expect(code).toBe(0)
      expect(asked).toEqual([{
        command: { command: "agent", args: ["--flag", "two words"], cwd: "/tmp", env: { ...rules.env, SPOOL_ITERATION: "3" } },
        rules
      }])
      const env = Object.fromEntries(text.trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]))
      expect(env.ONLY).toBe("from the rules")
      expect(env.SPOOL_ITERATION).toBe("3")
      expect(env.WRAPPED).toBe("yes")
      expect(env.SPOOL_TEST_LEAK).toBeUndefined()
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a command that does not extend the environment keeps its own alone", () =>
    Effect.gen(function*() {
      const base = yield* CommandExecutor.CommandExecutor
      const asked: Array<{ command: SandboxCommand; rules: SandboxRules }> = []
      const command = Command.make("agent").pipe(Command.env({ PATH: "/bin", A: "1" }, { extendEnv: false }))
      yield* output(sandboxedExecutor(base, recording(asked), rules), command)
      expect(asked[0]!.command.env).toEqual({ PATH: "/bin", A: "1" })
      expect(asked[0]!.command.cwd).toBe(".")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a command the sandbox cannot wrap does not start, and says why", () =>
    Effect.gen(function*() {
      const base = yield* CommandExecutor.CommandExecutor
      const error = yield* Effect.flip(output(sandboxedExecutor(base, refusing, rules), Command.make("touch", "/tmp/never")))
      expect(error.message).toContain("the sandbox refused to start it: no namespaces here")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a pipeline is refused, not run bare", () =>
    Effect.gen(function*() {
      const base = yield* CommandExecutor.CommandExecutor
      const asked: Array<{ command: SandboxCommand; rules: SandboxRules }> = []
      const piped = Command.pipeTo(Command.make("echo", "x"), Command.make("cat"))
      const error = yield* Effect.flip(output(sandboxedExecutor(base, recording(asked), rules), piped))
      expect(error.message).toContain("piped commands are not sandboxed")
      expect(asked).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer)))
})
