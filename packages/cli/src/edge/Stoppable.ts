import { currentGracePeriod } from "@spool/core"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, FiberId, Option, Stream } from "effect"
import { Outcome, type StopSignal } from "../ExitCode.js"
import { type Terminal, TerminalReporter } from "../TerminalReporter.js"
import { StopSignals } from "./StopSignals.js"

/** How long a stopped agent gets after SIGTERM before its process group is killed, unless stopped again. */
export const GRACE = Duration.seconds(5)

/** How long spool waits, after a second stop, for the program to end before it ends without it. */
export const GIVE_UP = Duration.seconds(2)

/** A defect, something spool did not expect, told in one line. */
export const crashed = (terminal: Terminal, cause: Cause.Cause<unknown>): Outcome => {
  terminal.error(`unexpected failure: ${Cause.pretty(cause).split("\n")[0]}`)
  return Outcome.Crashed()
}

/** What the program made of its end. Ctrl-C at a question arrives as a key, not a signal: the program is interrupted all the same. */
const outcomeOf = (terminal: Terminal, exit: Exit.Exit<Outcome>): Outcome =>
  Exit.isSuccess(exit) ? exit.value : Cause.isInterruptedOnly(exit.cause) ? Outcome.Interrupted() : crashed(terminal, exit.cause)

const tell = (terminal: Terminal, signal: StopSignal) =>
  Effect.sync(() => {
    terminal.erase()
    // A closed output has nobody to read it.
    if (signal !== "EPIPE") terminal.error(`stopping (${signal}); again to stop at once`, { afterBreak: true })
  })

/**
 * Runs `program` until it ends, or is stopped from outside (`StopSignals`). The first stop is told
 * and interrupts the program: its agent gets SIGTERM and the grace period. A second one ends the
 * grace period at once; should the program still not be done `GIVE_UP` later, spool ends without
 * it. A stop wins over what the program made of it.
 */
export const stoppable = <R>(program: Effect.Effect<Outcome, never, R>) =>
  Effect.scoped(Effect.gen(function*() {
    const terminal = yield* TerminalReporter
    const first = yield* Deferred.make<StopSignal>()
    const stopNow = yield* Deferred.make<void>()
    const givenUp = yield* Deferred.make<void>()

    const onStop = (signal: StopSignal, index: number) =>
      index === 0
        ? Effect.zipRight(tell(terminal, signal), Deferred.succeed(first, signal))
        : index === 1
        ? Deferred.succeed(stopNow, undefined).pipe(Effect.zipRight(Effect.sleep(GIVE_UP)), Effect.zipRight(Deferred.succeed(givenUp, undefined)))
        : Effect.void
    // Forked first, it listens before the program starts: the first stop may come at any moment.
    yield* Effect.forkScoped(Stream.runForEach(Stream.zipWithIndex(yield* StopSignals), ([signal, index]) => onStop(signal, index)))

    // A daemon: a fiber waits for its children to end, and spool does not wait for a program it gave up on.
    const running = yield* Effect.forkDaemon(
      Effect.locally(program, currentGracePeriod, Effect.raceFirst(Effect.sleep(GRACE), Deferred.await(stopNow)))
    )
    yield* Effect.forkScoped(Effect.zipRight(Deferred.await(first), Fiber.interruptFork(running)))
    // Should spool itself be interrupted, the program is too, as a child would be.
    yield* Effect.addFinalizer((exit) => Exit.isInterrupted(exit) ? Fiber.interrupt(running) : Effect.void)

    // Given up on, the program counts as interrupted: the stop that did it wins all the same.
    const exit = yield* Effect.raceFirst(Fiber.await(running), Effect.as(Deferred.await(givenUp), Exit.interrupt(FiberId.none)))
    const stopped = yield* Deferred.poll(first)
    return Option.isSome(stopped) ? Outcome.Stopped({ reason: yield* stopped.value }) : outcomeOf(terminal, exit)
  }))
