import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeSink from "@effect/platform-node/NodeSink"
import { Command, CommandExecutor, Error as PlatformError, FileSystem } from "@effect/platform"
import { ByteBatches } from "@spool/core"
import { Chunk, Deferred, Effect, Inspectable, Layer, Option, Stream } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Readable } from "node:stream"
import { escapedGroups } from "./ProcessTree.js"

/** A batch is handed over once it fills a pooled buffer (`ByteBatches`), or after `BATCH_WAIT_MS` otherwise. */
const BATCH_BYTES = ByteBatches.BATCH_BYTES
const BATCH_WAIT_MS = 4
/** Reading pauses while this much waits to be taken: memory stays bounded when the consumer is slower. */
const MAX_QUEUED = 4 * BATCH_BYTES
/** What one read of an output channel can bring: the channel reads into one buffer of this size, reused. */
const READ_BYTES = 256 * 1024

const systemError = (method: string, description: string) =>
  new PlatformError.SystemError({ module: "Command", method, reason: "Unknown", description })

/**
 * Gathers reads into batches and hands them to a stream: a chunk costs the stream once per batch,
 * not once per read. Reads are copied into a buffer of `ByteBatches` (a read's own buffer may be
 * reused at once); each batch is the part of it filled since the last one.
 */
const makeBatcher = (method: string, pause: () => void, resume: () => void, close: () => void) => {
  let queue: Array<Uint8Array> = []
  let queued = 0
  let filling: Uint8Array | null = null
  let filled = 0
  let ended = false
  let paused = false
  let failure: PlatformError.PlatformError | null = null
  let wake: (() => void) | null = null
  let timer: ReturnType<typeof setTimeout> | null = null
  const notify = () => {
    if (timer !== null) clearTimeout(timer)
    timer = null
    const resumeTake = wake
    wake = null
    resumeTake?.()
  }
  // Where the next batch starts in the buffer being filled.
  let shared = 0
  /** Hands on what was filled since the last batch, as a window of the buffer (no copy). */
  const sealFilling = () => {
    if (filling === null || filled === shared) return
    queue.push(ByteBatches.share(filling.subarray(shared, filled)))
    shared = filled
    if (filled < filling.length) return
    ByteBatches.seal(filling)
    filling = null
    filled = 0
    shared = 0
  }
  /** Takes one read (`bytes` may be reused by the reader as soon as this returns); false: pause reading. */
  const push = (bytes: Uint8Array): boolean => {
    let from = 0
    while (from < bytes.length) {
      if (filling === null) filling = ByteBatches.take()
      const taken = Math.min(filling.length - filled, bytes.length - from)
      filling.set(from === 0 && taken === bytes.length ? bytes : bytes.subarray(from, from + taken), filled)
      filled += taken
      from += taken
      queued += taken
      if (filled === filling.length) sealFilling()
    }
    if (wake !== null) {
      if (queued >= BATCH_BYTES) notify()
      else timer ??= setTimeout(notify, BATCH_WAIT_MS)
    }
    if (queued < MAX_QUEUED) return true
    paused = true
    pause()
    return false
  }
  const end = () => {
    ended = true
    notify()
  }
  const fail = (error: Error) => {
    failure = systemError(method, error.message)
    notify()
  }
  const take = Effect.async<Chunk.Chunk<Uint8Array>, Option.Option<PlatformError.PlatformError>>((resumeTake) => {
    const give = () => {
      sealFilling()
      if (queue.length > 0) {
        const batch = queue
        queue = []
        queued = 0
        if (paused) {
          paused = false
          resume()
        }
        resumeTake(Effect.succeed(Chunk.unsafeFromArray(batch)))
      } else if (failure !== null) resumeTake(Effect.fail(Option.some(failure)))
      else if (ended) resumeTake(Effect.fail(Option.none()))
      else wake = give
    }
    if (queued >= BATCH_BYTES || ended || failure !== null || queued === 0) return give()
    // Some output is waiting: give the reader a moment to fill the batch.
    wake = give
    timer ??= setTimeout(notify, BATCH_WAIT_MS)
  })
  const stream = Stream.repeatEffectChunkOption(take).pipe(
    Stream.ensuring(Effect.sync(() => {
      wake = null
      if (timer !== null) clearTimeout(timer)
      close()
      if (filling !== null) ByteBatches.seal(filling)
      filling = null
    }))
  )
  return { push, end, fail, stream }
}

/**
 * A child's output read from a pipe, in batches (the fallback when no output channel can be made).
 */
export const batchedOutput = (readable: Readable, method: string): Stream.Stream<Uint8Array, PlatformError.PlatformError> =>
  Stream.suspend(() => {
    const batcher = makeBatcher(method, () => readable.pause(), () => readable.resume(), () => readable.destroy())
    readable.on("data", (data: Uint8Array) => void batcher.push(data))
    readable.on("end", batcher.end)
    readable.on("error", batcher.fail)
    return batcher.stream
  })

/**
 * An output channel for a child: a connected pair of local sockets, one end given to the child as
 * its stdout or stderr (the same kind of descriptor a pipe to a child is on Linux), the other read
 * here into one buffer that every read reuses. Reading a pipe instead allocates a fresh 64 KiB
 * buffer per read, which only a garbage collection gives back: with an agent printing hundreds of
 * MiB, tens of MiB of them would wait for it. The socket lives in a private temporary directory
 * (only this user can connect to it), removed as soon as both ends are connected.
 */
interface Channel {
  /** The end the child writes to; close it here once the child has it. */
  readonly childEnd: Net.Socket
  readonly stream: Stream.Stream<Uint8Array, PlatformError.PlatformError>
  /** Closes both ends (whether or not the stream ran). */
  readonly close: () => void
}

const openChannels = (count: number, methods: ReadonlyArray<string>): Promise<Array<Channel> | null> =>
  new Promise((resolve) => {
    let dir: string
    try {
      dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spool-"))
    } catch {
      return resolve(null)
    }
    const address = Path.join(dir, "out")
    const server = Net.createServer()
    const channels: Array<Channel> = []
    let settled = false
    const done = (ok: boolean) => {
      if (settled) return
      settled = true
      server.close()
      Fs.rmSync(dir, { recursive: true, force: true })
      if (!ok) channels.forEach((channel) => channel.close())
      resolve(ok ? channels : null)
    }
    // Unix socket paths are short (104 bytes on some systems): a long temporary directory falls back to pipes.
    if (Buffer.byteLength(address) > 100) return done(false)
    server.on("error", () => done(false))
    server.listen(address, () => {
      const connectNext = () => {
        if (channels.length === count) return done(true)
        const method = methods[channels.length]!
        let batcher: ReturnType<typeof makeBatcher>
        const reader: Net.Socket = Net.connect({
          path: address,
          onread: { buffer: Buffer.allocUnsafe(READ_BYTES), callback: (nread, buffer) => batcher.push(buffer.subarray(0, nread)) }
        })
        batcher = makeBatcher(method, () => reader.pause(), () => reader.resume(), () => reader.destroy())
        reader.on("end", batcher.end)
        reader.on("error", (error) => {
          if (!settled) {
            reader.destroy()
            return done(false)
          }
          batcher.fail(error)
        })
        server.once("connection", (childEnd) => {
          channels.push({
            childEnd,
            stream: batcher.stream,
            close: () => {
              childEnd.destroy()
              reader.destroy()
            }
          })
          connectNext()
        })
      }
      connectNext()
    })
  })

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
