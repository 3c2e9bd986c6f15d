import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeSink from "@effect/platform-node/NodeSink"
import { Command, CommandExecutor, Error as PlatformError, FileSystem } from "@effect/platform"
import { Chunk, Deferred, Effect, Inspectable, Layer, Option, Stream } from "effect"
import * as ChildProcess from "node:child_process"
import type { Readable } from "node:stream"

/** A batch is handed over once it holds this much, or after `BATCH_WAIT_MS` otherwise. */
const BATCH_BYTES = 1024 * 1024
const BATCH_WAIT_MS = 1
/** Reading pauses while this much waits to be taken: memory stays bounded when the consumer is slower. */
const MAX_QUEUED = 2 * 1024 * 1024

const systemError = (method: string, description: string) =>
  new PlatformError.SystemError({ module: "Command", method, reason: "Unknown", description })

/**
 * A child's output as a stream of batches. The platform's reader takes each 64 KiB read through
 * the stream on its own, which costs more than the read itself: an agent printing fast is held
 * back by it. Here the pipe is read as fast as it fills, and the stream takes what has gathered
 * in one chunk of up to `BATCH_BYTES` (sooner when output pauses), so a chunk costs once per batch.
 */
export const batchedOutput = (readable: Readable, method: string): Stream.Stream<Uint8Array, PlatformError.PlatformError> =>
  Stream.suspend(() => {
    let queue: Array<Uint8Array> = []
    let queued = 0
    let ended = false
    let failure: PlatformError.PlatformError | null = null
    let wake: (() => void) | null = null
    let timer: ReturnType<typeof setTimeout> | null = null
    const notify = () => {
      if (timer !== null) clearTimeout(timer)
      timer = null
      const resume = wake
      wake = null
      resume?.()
    }
    readable.on("data", (data: Uint8Array) => {
      queue.push(data)
      queued += data.length
      if (queued >= MAX_QUEUED) readable.pause()
      if (wake === null) return
      if (queued >= BATCH_BYTES) notify()
      else timer ??= setTimeout(notify, BATCH_WAIT_MS)
    })
    readable.on("end", () => {
      ended = true
      notify()
    })
    readable.on("error", (error) => {
      failure = systemError(method, error.message)
      notify()
    })
    const take = Effect.async<Chunk.Chunk<Uint8Array>, Option.Option<PlatformError.PlatformError>>((resume) => {
      const give = () => {
        if (queue.length > 0) {
          const batch = queue
          queue = []
          queued = 0
          if (readable.isPaused()) readable.resume()
          resume(Effect.succeed(Chunk.unsafeFromArray(batch)))
        } else if (failure !== null) resume(Effect.fail(Option.some(failure)))
        else if (ended) resume(Effect.fail(Option.none()))
        else wake = give
      }
      if (queued >= BATCH_BYTES || ended || failure !== null || queue.length === 0) return give()
      // Some output is waiting: give the pipe a moment to fill the batch.
      wake = give
      timer ??= setTimeout(notify, BATCH_WAIT_MS)
    })
    return Stream.repeatEffectChunkOption(take).pipe(
      Stream.ensuring(Effect.sync(() => {
        wake = null
        if (timer !== null) clearTimeout(timer)
        readable.destroy()
      }))
    )
  })

const ProcessProto = {
  [CommandExecutor.ProcessTypeId]: CommandExecutor.ProcessTypeId,
  ...Inspectable.BaseProto,
  toJSON(this: CommandExecutor.Process) {
    return { _id: "@effect/platform/CommandExecutor/Process", pid: this.pid }
  }
}

/** Starts one plain command (no pipeline) in its own process group, its output read in batches. */
const startStandard = (fs: FileSystem.FileSystem, command: Command.StandardCommand) =>
  Effect.gen(function*() {
    // As the platform's executor does: a missing directory is not reported as a missing program.
    if (Option.isSome(command.cwd)) yield* fs.access(command.cwd.value)
    const exited = yield* Deferred.make<readonly [number | null, NodeJS.Signals | null]>()
    const child = yield* Effect.acquireRelease(
      Effect.async<ChildProcess.ChildProcess, PlatformError.PlatformError>((resume) => {
        const handle = ChildProcess.spawn(command.command, command.args, {
          stdio: [typeof command.stdin === "string" ? command.stdin : "pipe", "pipe", "pipe"],
          cwd: Option.getOrUndefined(command.cwd),
          env: command.extendEnv ? { ...process.env, ...Object.fromEntries(command.env) } : Object.fromEntries(command.env),
          detached: true
        })
        handle.on("error", (error) => resume(Effect.fail(systemError("spawn", error.message))))
        handle.on("exit", (code, signal) => Deferred.unsafeDone(exited, Effect.succeed([code, signal] as const)))
        handle.on("spawn", () => resume(Effect.succeed(handle)))
      }),
      (handle) =>
        Effect.flatMap(Deferred.isDone(exited), (done) =>
          done ? Effect.void : Effect.sync(() => signalGroup(handle, "SIGTERM")).pipe(Effect.zipRight(Deferred.await(exited)), Effect.asVoid))
    )
    const kill = (signal: CommandExecutor.Signal = "SIGTERM") =>
      Effect.try({ try: () => signalGroup(child, signal), catch: (error) => systemError("kill", String(error)) }).pipe(
        Effect.zipRight(Deferred.await(exited)),
        Effect.asVoid
      )
    const exitCode = Effect.flatMap(Deferred.await(exited), ([code, signal]) =>
      code !== null
        ? Effect.succeed(CommandExecutor.ExitCode(code))
        : Effect.fail(systemError("exitCode", `Process interrupted due to receipt of signal: ${signal}`)))
    const stdin = child.stdin === null
      ? Effect.void
      : Effect.forkDaemon(Stream.run(
        command.stdin as Stream.Stream<Uint8Array>,
        NodeSink.fromWritable(() => child.stdin!, (error) => systemError("stdin", String(error)))
      ))
    yield* typeof command.stdin === "string" ? Effect.void : stdin
    return Object.assign(Object.create(ProcessProto), {
      pid: CommandExecutor.ProcessId(child.pid!),
      exitCode,
      isRunning: Effect.negate(Deferred.isDone(exited)),
      kill,
      stdin: NodeSink.fromWritable(() => child.stdin!, (error) => systemError("stdin", String(error))),
      stdout: batchedOutput(child.stdout!, "stdout"),
      stderr: batchedOutput(child.stderr!, "stderr")
    }) as CommandExecutor.Process
  })

/** The whole group when it can (the child leads its own), else the child alone. */
const signalGroup = (handle: ChildProcess.ChildProcess, signal: NodeJS.Signals) => {
  try {
    process.kill(-handle.pid!, signal)
  } catch {
    handle.kill(signal)
  }
}

/**
 * The platform's command executor, except that a plain command's output is read in batches
 * (`batchedOutput`); pipelines go to the platform's own.
 */
export const layer: Layer.Layer<CommandExecutor.CommandExecutor, never, FileSystem.FileSystem> = Layer.effect(
  CommandExecutor.CommandExecutor,
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const platform = yield* Effect.provide(CommandExecutor.CommandExecutor, NodeCommandExecutor.layer)
    return CommandExecutor.makeExecutor((command) =>
      command._tag === "StandardCommand" ? startStandard(fs, command) : platform.start(command)
    )
  })
)
