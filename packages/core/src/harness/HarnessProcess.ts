import { Command, CommandExecutor, FileSystem } from "@effect/platform"
import { Duration, Effect, FiberRef, Option, Stream } from "effect"
import { HarnessError, HarnessEvent } from "./HarnessService.js"

export interface ProcessSpec {
  readonly harness: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env?: Readonly<Record<string, string>>
  /** Written to the agent's stdin, which is then closed; null gives it an empty stdin. */
  readonly stdin: string | null
  /** Its output is plain text, the agent's own (see `Output`). */
  readonly plain?: boolean
}

/**
 * How long a stopped agent gets to exit after SIGTERM before its process group is killed: an
 * effect that completes when the grace period is over. The CLI ends it early on a second Ctrl-C.
 */
export const currentGracePeriod = FiberRef.unsafeMake<Effect.Effect<void>>(Effect.sleep(Duration.seconds(5)))

/** The signal named in a platform error about a process killed by one. */
export const signalOf = (message: string) => /signal:?\s*(SIG[A-Z0-9]+)/.exec(message)?.[1] ?? "SIGKILL"

/**
 * Stops a process started in its own process group: SIGTERM to the group if it still runs, the
 * grace period to exit, then SIGKILL to the group, so that nothing it started is left either.
 */
export const stopProcessGroup = (proc: CommandExecutor.Process) =>
  Effect.gen(function*() {
    if (yield* proc.isRunning.pipe(Effect.orElseSucceed(() => false))) {
      const grace = yield* FiberRef.get(currentGracePeriod)
      // Finalizers run uninterruptibly; the race must be able to interrupt its loser.
      yield* Effect.interruptible(Effect.raceFirst(proc.kill("SIGTERM").pipe(Effect.ignore), grace))
    }
    yield* proc.kill("SIGKILL").pipe(Effect.ignore, Effect.timeout(Duration.seconds(5)), Effect.ignore)
  })

/**
 * Runs an agent process in its own process group and reports its output as `Output` events, one
 * per batch of bytes as read (never decoded here), ending with `Exited`. Closing the stream early (interruption, timeout) sends SIGTERM to the
 * whole group, waits the grace period, then sends SIGKILL, so nothing it started survives.
 */
export const runProcess = (
  executor: CommandExecutor.CommandExecutor,
  spec: ProcessSpec
): Stream.Stream<HarnessEvent, HarnessError> => {
  const command = Command.make(spec.command, ...spec.args).pipe(
    Command.workingDirectory(spec.cwd),
    Command.env(spec.env ?? {}),
    Command.stdin(spec.stdin === null ? Stream.empty : Stream.make(new TextEncoder().encode(spec.stdin)))
  )
  const fail = (reason: HarnessError["reason"], detail: string) =>
    new HarnessError({ harness: spec.harness, reason, detail })

  return Stream.unwrapScoped(
    Effect.gen(function*() {
      const proc = yield* executor.start(command).pipe(
        Effect.mapError((error) => {
          const text = error.message
          if (/ENOENT/.test(text)) return fail("NotFound", `'${spec.command}' was not found`)
          if (/EACCES/.test(text)) return fail("NotExecutable", `'${spec.command}' is not executable`)
          return fail("SpawnFailed", text)
        })
      )
      // Runs before the executor's own finalizer: give the agent its grace period, then make sure.
      yield* Effect.addFinalizer(() => stopProcessGroup(proc))
      const io = (error: { message: string }) => fail("Io", error.message)
      const plain = spec.plain === true
      const stdout = proc.stdout.pipe(Stream.map((bytes) => HarnessEvent.Output({ stream: "stdout", bytes, plain })))
      const stderr = proc.stderr.pipe(Stream.map((bytes) => HarnessEvent.Output({ stream: "stderr", bytes, plain })))
      const exited = proc.exitCode.pipe(
        Effect.map((code) => HarnessEvent.Exited({ exitCode: code, signal: null })),
        Effect.catchAll((error) => Effect.succeed(HarnessEvent.Exited({ exitCode: null, signal: signalOf(error.message) })))
      )
      return Stream.merge(stdout, stderr).pipe(
        Stream.mapError(io),
        Stream.concat(Stream.fromEffect(exited))
      )
    })
  )
}

/** Finds a program the way a shell would: a path with a `/` as given, otherwise the first match on PATH. */
export const resolveProgram = (program: string, pathEnv: string | undefined, harness: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const candidates = program.includes("/")
      ? [program]
      : (pathEnv ?? "").split(":").filter((dir) => dir !== "").map((dir) => `${dir}/${program}`)
    for (const candidate of candidates) {
      const info = yield* fs.stat(candidate).pipe(Effect.option)
      if (Option.isSome(info) && info.value.type === "File") {
        if ((info.value.mode & 0o111) === 0) {
          return yield* new HarnessError({ harness, reason: "NotExecutable", detail: `'${candidate}' is not executable (chmod +x it)` })
        }
        return candidate
      }
    }
    return yield* new HarnessError({ harness, reason: "NotFound", detail: `'${program}' was not found${program.includes("/") ? "" : " on PATH"}` })
  })

/** Where an agent's program is looked for, and what to say when it is missing. */
export interface AgentProgram {
  readonly harness: string
  /** The program's name on PATH (`opencode`). */
  readonly program: string
  /** The environment variable that may name it instead (`SPOOL_OPENCODE_BIN`). */
  readonly envVar: string
  /** The variable's value, or null when it is not set. */
  readonly binary: string | null
  readonly pathEnv: string | undefined
  /** How to install it, e.g. "install it with `npm install -g opencode-ai`". */
  readonly install: string
}

/** Finds an agent's program (the variable's path, else PATH); when it is missing, says how to install it. */
export const resolveAgent = (agent: AgentProgram) =>
  resolveProgram(agent.binary ?? agent.program, agent.pathEnv, agent.harness).pipe(
    Effect.catchTag("HarnessError", (error) => {
      if (error.reason !== "NotFound") return Effect.fail(error)
      const hint = `${agent.install}, or set ${agent.envVar} to its path`
      return Effect.fail(
        new HarnessError({
          harness: agent.harness,
          reason: "NotFound",
          detail: agent.binary === null
            ? `'${agent.program}' was not found on PATH; ${hint}`
            : `${agent.envVar} is '${agent.binary}', which does not exist; ${hint}`
        })
      )
    })
  )

/** Splits `program arg "quoted arg"` into argv, as a shell would for plain words and quotes, without running a shell; null on an unterminated quote. */
export const splitArgs = (text: string): Array<string> | null => {
  const args: Array<string> = []
  let current = ""
  let quote: "'" | "\"" | null = null
  let started = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (quote !== null) {
      if (ch === quote) quote = null
      else if (ch === "\\" && quote === "\"" && i + 1 < text.length) current += text[++i]
      else current += ch
    } else if (ch === "'" || ch === "\"") {
      quote = ch
      started = true
    } else if (ch === "\\" && i + 1 < text.length) {
      current += text[++i]
      started = true
    } else if (/\s/.test(ch)) {
      if (started) args.push(current)
      current = ""
      started = false
    } else {
      current += ch
      started = true
    }
  }
  if (quote !== null) return null
  if (started) args.push(current)
  return args
}
