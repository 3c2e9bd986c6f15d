import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeSink from "@effect/platform-node/NodeSink"
import { Command, CommandExecutor, Error as PlatformError, FileSystem } from "@effect/platform"
import { Deferred, Effect, Inspectable, Layer, Option, Stream } from "effect"
import * as ChildProcess from "node:child_process"
import { systemError } from "./CommandError.js"
import { batchedOutput } from "./OutputBatcher.js"
import { openChannels } from "./OutputChannel.js"
import { escapedGroups } from "./ProcessTree.js"

const ProcessProto = {
  [CommandExecutor.ProcessTypeId]: CommandExecutor.ProcessTypeId,
  ...Inspectable.BaseProto,
  toJSON(this: CommandExecutor.Process) {
    return { _id: "@effect/platform/CommandExecutor/Process", pid: this.pid }
  }
}

/** Starts one plain command (no pipeline) in its own process group, its output read in batches. */
const startStandard = (fs: FileSystem.FileSystem, env: NodeJS.ProcessEnv, command: Command.StandardCommand) =>
  Effect.gen(function*() {
    // As the platform's executor does: a missing directory is not reported as a missing program.
    if (Option.isSome(command.cwd)) yield* fs.access(command.cwd.value)
    const exited = yield* Deferred.make<readonly [number | null, NodeJS.Signals | null]>()
    // Closed after the child is stopped (finalizers run in reverse): it never writes to a closed channel.
    const channels = yield* Effect.acquireRelease(
      Effect.promise(() => openChannels(2, ["stdout", "stderr"])),
      (channels) => Effect.sync(() => channels?.forEach((channel) => channel.close()))
    )
    const child = yield* Effect.acquireRelease(
      Effect.async<ChildProcess.ChildProcess, PlatformError.PlatformError>((resume) => {
        // The child has its own copies of the channels' ends once it is started (or never will).
        const releaseChildEnds = () => channels?.forEach((channel) => channel.childEnd.destroy())
        const handle = ChildProcess.spawn(command.command, command.args, {
          stdio: [
            typeof command.stdin === "string" ? command.stdin : "pipe",
            channels?.[0]!.childEnd ?? "pipe",
            channels?.[1]!.childEnd ?? "pipe"
          ],
          cwd: Option.getOrUndefined(command.cwd),
          env: command.extendEnv ? { ...env, ...Object.fromEntries(command.env) } : Object.fromEntries(command.env),
          detached: true
        })
        handle.on("error", (error) => {
          releaseChildEnds()
          resume(Effect.fail(systemError("spawn", error.message)))
        })
        handle.on("exit", (code, signal) => Deferred.unsafeDone(exited, Effect.succeed([code, signal] as const)))
        handle.on("spawn", () => {
          releaseChildEnds()
          resume(Effect.succeed(handle))
        })
      }),
      (handle) =>
        Effect.flatMap(Deferred.isDone(exited), (done) =>
          done ? Effect.void : Effect.sync(() => signal(handle, "SIGTERM")).pipe(Effect.zipRight(Deferred.await(exited)), Effect.asVoid))
    )
    // Groups the child's descendants moved to, as seen at each signal: orphans are no longer its descendants.
    const escaped = new Set<number>()
    const signal = (handle: ChildProcess.ChildProcess, name: NodeJS.Signals) => {
      if (handle.pid !== undefined) for (const group of escapedGroups(handle.pid)) escaped.add(group)
      signalGroup(handle, name)
      for (const group of escaped) signalEscaped(group, name)
    }
    const kill = (name: CommandExecutor.Signal = "SIGTERM") =>
      Effect.try({ try: () => signal(child, name), catch: (error) => systemError("kill", String(error)) }).pipe(
        Effect.zipRight(Deferred.await(exited)),
        Effect.asVoid
      )
    const exitCode = Effect.flatMap(Deferred.await(exited), ([code, signal]) =>
      code !== null
        ? Effect.succeed(CommandExecutor.ExitCode(code))
        : Effect.fail(systemError("exitCode", `Process interrupted due to receipt of signal: ${signal}`)))
    // A stream given as stdin is fed to it; "pipe" (the default) and "inherit" are the child's as spawned.
    const input = command.stdin
    if (child.stdin !== null && typeof input !== "string") {
      yield* Effect.forkDaemon(Stream.run(input, NodeSink.fromWritable(() => child.stdin!, (error) => systemError("stdin", String(error)))))
    }
    return Object.assign(Object.create(ProcessProto), {
      pid: CommandExecutor.ProcessId(child.pid!),
      exitCode,
      isRunning: Effect.negate(Deferred.isDone(exited)),
      kill,
      stdin: NodeSink.fromWritable(() => child.stdin!, (error) => systemError("stdin", String(error))),
      stdout: channels?.[0]!.stream ?? batchedOutput(child.stdout!, "stdout"),
      stderr: channels?.[1]!.stream ?? batchedOutput(child.stderr!, "stderr")
    }) as CommandExecutor.Process
  })

/** A group a descendant of the child leads (`escapedGroups`); gone already, or never there, is fine. */
const signalEscaped = (group: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-group, signal)
  } catch {
    // No such group any more.
  }
}

/** The whole group when it can (the child leads its own), else the child alone. */
const signalGroup = (handle: ChildProcess.ChildProcess, signal: NodeJS.Signals) => {
  try {
    process.kill(-handle.pid!, signal)
  } catch {
    handle.kill(signal)
  }
}

/**
 * The platform's command executor, except that a plain command's output is read through output
 * channels (`openChannels`; pipes when none can be made) in batches; pipelines go to the platform's own.
 * A plain command extends `env`, the environment spool was started with.
 */
export const layer = (env: NodeJS.ProcessEnv): Layer.Layer<CommandExecutor.CommandExecutor, never, FileSystem.FileSystem> =>
  Layer.effect(
    CommandExecutor.CommandExecutor,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const platform = yield* Effect.provide(CommandExecutor.CommandExecutor, NodeCommandExecutor.layer)
      return CommandExecutor.makeExecutor((command) =>
        command._tag === "StandardCommand" ? startStandard(fs, env, command) : platform.start(command)
      )
    })
  )
