import { Command, CommandExecutor } from "@effect/platform"
import { Clock, Duration, Effect, FiberRef, Schedule, Stream } from "effect"
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

const machineClock = Clock.make()

/**
 * Whether any process of the group is left, once its leader has exited: signal 0 to the group (the
 * platform's `kill` sends to the group, then waits for the leader).
 */
const groupLeft = (proc: CommandExecutor.Process) =>
  proc.kill(0 as unknown as CommandExecutor.Signal).pipe(Effect.as(true), Effect.orElseSucceed(() => false))

/**
 * Stops a process started in its own process group: SIGTERM to the group if it still runs, the
 * grace period for the whole group to exit (a leader that exits at once may leave the agent's own
 * process still writing what it writes as it stops), then SIGKILL to the group, so that nothing it
 * started is left either.
 */
export const stopProcessGroup = (proc: CommandExecutor.Process) =>
  Effect.gen(function*() {
    if (yield* proc.isRunning.pipe(Effect.orElseSucceed(() => false))) {
      const grace = yield* FiberRef.get(currentGracePeriod)
      const stopped = proc.kill("SIGTERM").pipe(
        Effect.ignore,
        Effect.zipRight(Effect.repeat(groupLeft(proc), { schedule: Schedule.spaced(Duration.millis(50)), while: (left) => left })),
        // Processes exit in the machine's time, whatever clock the loop reads.
        Effect.withClock(machineClock)
      )
      // Finalizers run uninterruptibly; the race must be able to interrupt its loser.
      yield* Effect.interruptible(Effect.raceFirst(stopped, grace))
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
