import { Command, CommandExecutor } from "@effect/platform"
import { Clock, Context, Effect, Fiber, Layer, Option, Stream } from "effect"
import type { CheckResult } from "../domain/CheckResult.js"
import { signalOf, stopProcessGroup } from "../harness/HarnessProcess.js"
import { makeByteHeadTail } from "../output/HeadTail.js"

/** One check to run: a shell command, where, and for how long at most. */
export interface CheckRequest {
  readonly command: string
  /** Where the agent works: the check sees what the agent left. */
  readonly cwd: string
  readonly timeoutMs: number
  readonly env: Readonly<Record<string, string>>
  /** What the command reads on stdin; without it, stdin is closed. */
  readonly stdin?: string
}

interface Ended {
  readonly exitCode: number | null
  readonly signal: string | null
}

/** A check's result with what it printed (stdout and stderr as they came): its head and its tail. */
export interface CheckRun extends CheckResult {
  readonly output: string
}

/** How long output is still read after a check's shell has exited. */
const DRAIN_MS = 1000

/** Bytes of a check's output kept from its start, and as many from its end. */
export const OUTPUT_HALF_BYTES = 8192

/**
 * Runs the project's own checks of a claim (`--verify`). Which runner is used is a matter of the
 * layer: real processes in the CLI, a scripted fake in tests.
 */
export class CheckRunner extends Context.Tag("@spool/core/CheckRunner")<CheckRunner, {
  /**
   * Runs `sh -c <command>` in its own process group, with `stdin` on its stdin (else closed). Past the timeout, or when
   * interrupted, the whole group gets SIGTERM, then SIGKILL after the grace period; nothing it
   * started is left running either way. A check that cannot start fails, with the reason as its output.
   */
  readonly run: (request: CheckRequest) => Effect.Effect<CheckRun>
}>() {
  static readonly layer = Layer.effect(
    CheckRunner,
    Effect.map(CommandExecutor.CommandExecutor, (executor) => ({
      run: (request: CheckRequest) =>
        Effect.gen(function*() {
          const startedAt = yield* Clock.currentTimeMillis
          const output = makeByteHeadTail(OUTPUT_HALF_BYTES)
          // One channel, as on a terminal: what it printed keeps its order.
          const command = Command.make("sh", "-c", `exec 2>&1\n${request.command}`).pipe(
            Command.workingDirectory(request.cwd),
            Command.env(request.env),
            Command.stdin(request.stdin === undefined ? Stream.empty : Stream.make(new TextEncoder().encode(request.stdin)))
          )
          const ran = yield* Effect.scoped(Effect.gen(function*() {
            const proc = yield* executor.start(command)
            // Added after the executor's own finalizer, so it runs first: the group is stopped, not only waited for.
            yield* Effect.addFinalizer(() => stopProcessGroup(proc))
            const reading = yield* Effect.forkScoped(
              Stream.runForEach(Stream.merge(proc.stdout, proc.stderr), (bytes) => Effect.sync(() => output.append(bytes)))
            )
            const ended = yield* proc.exitCode.pipe(
              Effect.map((code): Ended => ({ exitCode: code, signal: null })),
              Effect.catchAll((error) => Effect.succeed<Ended>({ exitCode: null, signal: signalOf(error.message) }))
            )
            // What it left running in the background may hold its output open: the check is over when
            // its shell is; what is still printing then is read a moment more, then stopped with the group.
            yield* Effect.timeoutOption(Fiber.join(reading), DRAIN_MS)
            return ended
          }).pipe(
            Effect.timeoutOption(request.timeoutMs),
            Effect.catchAll((error) =>
              Effect.sync(() => {
                output.append(new TextEncoder().encode(`spool: the check could not run: ${error.message}\n`))
                return Option.some<Ended>({ exitCode: null, signal: null })
              })
            )
          ))
          const durationMs = (yield* Clock.currentTimeMillis) - startedAt
          const ended = Option.getOrNull(ran)
          return {
            command: request.command,
            exitCode: ended?.exitCode ?? null,
            signal: ended?.signal ?? null,
            timedOut: ended === null,
            durationMs,
            passed: ended?.exitCode === 0,
            output: output.text(null)
          } satisfies CheckRun
        })
    }))
  )

  /**
   * A fake runner for tests: `script` answers each request (command, exit code or signal, output);
   * every request is recorded in `requests`.
   */
  static readonly layerTest = (
    script: (request: CheckRequest) => Omit<CheckRun, "command" | "passed"> | Effect.Effect<Omit<CheckRun, "command" | "passed">>,
    requests: Array<CheckRequest> = []
  ) =>
    Layer.succeed(CheckRunner, {
      run: (request) =>
        Effect.suspend(() => {
          requests.push(request)
          const answer = script(request)
          return Effect.map(Effect.isEffect(answer) ? answer : Effect.succeed(answer), (result) => ({
            ...result,
            command: request.command,
            passed: !result.timedOut && result.exitCode === 0
          }))
        })
    })
}
