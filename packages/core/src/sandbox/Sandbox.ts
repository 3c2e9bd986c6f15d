import { Command, CommandExecutor, Error as PlatformError } from "@effect/platform"
import { Context, Data, Effect, HashMap, Option, type Scope } from "effect"
import type { SandboxRules } from "./SandboxPolicy.js"

/** The sandbox cannot be set up, or cannot wrap a command: nothing runs unsandboxed instead. */
export class SandboxError extends Data.TaggedError("SandboxError")<{ readonly message: string }> {}

/** One process to start inside the walls: its program, arguments, directory and whole environment. */
export interface SandboxCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

/** The command that starts it inside them, with the environment to start that with (and nothing else). */
export interface WrappedCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/**
 * Puts processes inside walls (`--sandbox`). Which runtime builds them is a matter of the layer:
 * the sandbox runtime in the application, a recording fake in tests.
 */
export class Sandbox extends Context.Tag("@spool/core/Sandbox")<Sandbox, {
  /** What the runtime is, for records and status lines (`bubblewrap`, `sandbox-exec`). */
  readonly runtime: string
  /**
   * `command` as it starts inside `rules`' walls; what it is allowed (its hosts) is withdrawn
   * when the scope closes, so the process is started and ended within it.
   */
  readonly wrap: (command: SandboxCommand, rules: SandboxRules) => Effect.Effect<WrappedCommand, SandboxError, Scope.Scope>
}>() {}

const refused = (command: Command.StandardCommand, message: string) =>
  new PlatformError.SystemError({
    reason: "Unknown",
    module: "Command",
    method: "spawn",
    pathOrDescriptor: command.command,
    description: `the sandbox refused to start it: ${message}`
  })

/**
 * A process runner that starts every command inside `rules`' walls, through `base`. A command
 * that extends the environment extends the rules' environment, not this process's: what the
 * rules leave out never reaches it. One that cannot be wrapped fails to start; none starts bare.
 */
export const sandboxedExecutor = (
  base: CommandExecutor.CommandExecutor,
  sandbox: Sandbox["Type"],
  rules: SandboxRules
): CommandExecutor.CommandExecutor =>
  CommandExecutor.makeExecutor((command) =>
    Effect.gen(function*() {
      if (command._tag !== "StandardCommand") {
        return yield* Effect.fail(refused(Command.flatten(command)[0], "piped commands are not sandboxed"))
      }
      const own = Object.fromEntries(HashMap.toEntries(command.env))
      const wrapped = yield* sandbox.wrap(
        {
          command: command.command,
          args: command.args,
          cwd: Option.getOrElse(command.cwd, () => "."),
          env: command.extendEnv ? { ...rules.env, ...own } : own
        },
        rules
      ).pipe(Effect.mapError((error) => refused(command, error.message)))
      let inside = Command.make(wrapped.command, ...wrapped.args).pipe(
        Command.env(wrapped.env, { extendEnv: false }),
        Command.stdin(command.stdin),
        Command.stdout(command.stdout),
        Command.stderr(command.stderr)
      )
      if (Option.isSome(command.cwd)) inside = Command.workingDirectory(inside, command.cwd.value)
      return yield* base.start(inside)
    })
  )
