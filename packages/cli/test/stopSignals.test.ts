import { assert, describe, it } from "@effect/vitest"
import { currentGracePeriod } from "@spool/core"
import { Chunk, Clock, Deferred, Duration, Effect, Fiber, FiberRef, Layer, Option, Stream, TestClock } from "effect"
import { EventEmitter } from "node:events"
import { stopSignals } from "../src/edge/Started.js"
import * as StopSignals from "../src/edge/StopSignals.js"
import { stoppable } from "../src/edge/Stoppable.js"
import { Outcome } from "../src/ExitCode.js"
import * as TerminalReporter from "../src/TerminalReporter.js"

/** A process of the test's own: signals, a stdout and a stderr it can make fail, and spool's terminal on it. */
const fakeProcess = () => {
  const signals = new EventEmitter()
  const stdout = new EventEmitter()
  const stderr = new EventEmitter()
  const terminal = TerminalReporter.capture()
  return {
    signals,
    stdout,
    stderr,
    terminal,
    /** How many listeners each signal, stdout's errors and stderr's have. */
    listeners: () => [...stopSignals.map((signal) => signals.listenerCount(signal)), stdout.listenerCount("error"), stderr.listenerCount("error")],
    failWrite: (output: EventEmitter, code: string) => output.emit("error", Object.assign(new Error(`write ${code}`), { code })),
    layer: Layer.merge(StopSignals.layer(signals, [stdout, stderr]), terminal.layer)
  }
}
type FakeProcess = ReturnType<typeof fakeProcess>

/** Waits, yielding to the other fibers, until `check` holds. */
const eventually = (check: Effect.Effect<boolean>, tries = 10_000): Effect.Effect<void> =>
  Effect.flatMap(check, (holds) =>
    holds ? Effect.void : tries === 0 ? Effect.dieMessage("never came true") : Effect.zipRight(Effect.yieldNow(), eventually(check, tries - 1)))

/** Until `deferred` is done: what the code under test does, waited for without hanging when it does not. */
const completed = (deferred: Deferred.Deferred<void>) => eventually(Deferred.isDone(deferred))

/** What `running` ended with, once it has: an end that never comes fails the test rather than hanging it. */
const outcome = <A>(running: Fiber.Fiber<A>) => Effect.zipRight(eventually(Effect.map(Fiber.poll(running), Option.isSome)), Fiber.join(running))

const listening = (fake: FakeProcess) => eventually(Effect.sync(() => fake.listeners().every((count) => count === 1)))

/** Until a sleep is due `duration` from now on the test clock. */
const sleeping = (duration: Duration.DurationInput) =>
  eventually(Effect.gen(function*() {
    const due = (yield* Clock.currentTimeMillis) + Duration.toMillis(duration)
    return Chunk.some(yield* TestClock.sleeps(), (at) => at === due)
  }))

/** `stoppable(program)` forked, once it listens. */
const start = (fake: FakeProcess, program: Effect.Effect<Outcome>) =>
  Effect.gen(function*() {
    const running = yield* Effect.fork(Effect.provide(stoppable(program), fake.layer))
    yield* listening(fake)
    return running
  })

/**
 * A program that runs until interrupted, then waits out the grace period it is given, and then
 * `after`. It waits as an agent's stop does: in a fiber of its own, where the grace period's race
 * can end its loser.
 */
const gracefulProgram = (after: Effect.Effect<void> = Effect.void) =>
  Effect.gen(function*() {
    const stopping = yield* Deferred.make<void>()
    const graceOver = yield* Deferred.make<void>()
    const grace = Effect.flatMap(FiberRef.get(currentGracePeriod), (period) => Effect.flatMap(Effect.fork(Effect.interruptible(period)), Fiber.join))
    const program = Effect.as(Effect.never, Outcome.Done()).pipe(
      Effect.onInterrupt(() =>
        Deferred.succeed(stopping, undefined).pipe(
          Effect.zipRight(grace),
          Effect.zipRight(Deferred.succeed(graceOver, undefined)),
          Effect.zipRight(after)
        )
      )
    )
    return { program, stopping, graceOver }
  })

const GRACE = Duration.seconds(5)
const GIVE_UP = Duration.seconds(2)
const stoppingLine = (signal: string) => `\nspool: stopping (${signal}); again to stop at once\n`

describe("StopSignals: the process's reasons to stop, as a stream", () => {
  it.effect("each signal, and an output gone for good (EPIPE, EIO) as EPIPE; another failed write is no stop; no listener left once the stream ends", () =>
    Effect.gen(function*() {
      const fake = fakeProcess()
      const stops = yield* Effect.fork(Stream.runCollect(Stream.take(StopSignals.fromProcess(fake.signals, [fake.stdout, fake.stderr]), 5)))
      yield* listening(fake)
      fake.failWrite(fake.stdout, "ECONNRESET")
      fake.signals.emit("SIGHUP")
      fake.failWrite(fake.stdout, "EPIPE")
      fake.signals.emit("SIGTERM")
      fake.failWrite(fake.stderr, "EIO")
      fake.signals.emit("SIGINT")
      assert.deepStrictEqual(Chunk.toReadonlyArray(yield* outcome(stops)), ["SIGHUP", "EPIPE", "SIGTERM", "EPIPE", "SIGINT"])
      assert.deepStrictEqual(fake.listeners(), [0, 0, 0, 0, 0])
    }))
})

describe("stoppable: a program stopped from outside", () => {
  it.effect("a program that ends by itself ends with its own outcome, untold, and leaves no listener behind", () =>
    Effect.gen(function*() {
      const fake = fakeProcess()
      const finish = yield* Deferred.make<void>()
      const running = yield* start(fake, Effect.as(Deferred.await(finish), Outcome.LoopEnded({ status: "complete" })))
      assert.deepStrictEqual(fake.listeners(), [1, 1, 1, 1, 1])
      yield* Deferred.succeed(finish, undefined)
      assert.deepStrictEqual(yield* outcome(running), Outcome.LoopEnded({ status: "complete" }))
      assert.deepStrictEqual(fake.listeners(), [0, 0, 0, 0, 0])
      assert.strictEqual(fake.terminal.stderr(), "")
    }))

  it.effect("the first signal is told on a line of its own and interrupts the program; the stop wins over what the program made of it", () =>
    Effect.gen(function*() {
      for (const signal of stopSignals) {
        const fake = fakeProcess()
        const interrupted = yield* Deferred.make<void>()
        const running = yield* start(fake, Effect.as(Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)), Outcome.Done()))
        fake.signals.emit(signal)
        yield* completed(interrupted)
        // Interrupted, the program alone would end as Interrupted (130), whatever the signal.
        assert.deepStrictEqual(yield* outcome(running), Outcome.Stopped({ reason: signal }), signal)
        assert.strictEqual(fake.terminal.stderr(), stoppingLine(signal))
      }
    }))

  it.effect("an output nobody reads any more stops the program untold, as EPIPE", () =>
    Effect.gen(function*() {
      const fake = fakeProcess()
      const running = yield* start(fake, Effect.as(Effect.never, Outcome.Done()))
      fake.failWrite(fake.stdout, "EPIPE")
      assert.deepStrictEqual(yield* outcome(running), Outcome.Stopped({ reason: "EPIPE" }))
      assert.strictEqual(fake.terminal.stderr(), "")
    }))

  it.effect("after the first stop the agent gets the grace period: 5 s on the clock", () =>
    Effect.gen(function*() {
      const fake = fakeProcess()
      const { graceOver, program, stopping } = yield* gracefulProgram()
      const running = yield* start(fake, program)
      fake.signals.emit("SIGTERM")
      yield* completed(stopping)
      yield* sleeping(GRACE)
      yield* TestClock.adjust(Duration.subtract(GRACE, Duration.millis(1)))
      assert.isFalse(yield* Deferred.isDone(graceOver))
      yield* TestClock.adjust(Duration.millis(1))
      assert.deepStrictEqual(yield* outcome(running), Outcome.Stopped({ reason: "SIGTERM" }))
      assert.isTrue(yield* Deferred.isDone(graceOver))
    }))

  it.effect("a second signal ends the grace period at once; the first one's reason stands, and is told once", () =>
    Effect.gen(function*() {
      const fake = fakeProcess()
      const { graceOver, program, stopping } = yield* gracefulProgram()
      const running = yield* start(fake, program)
      fake.signals.emit("SIGINT")
      yield* completed(stopping)
      yield* sleeping(GRACE)
      yield* TestClock.adjust("1 second")
      fake.signals.emit("SIGTERM")
      yield* completed(graceOver)
      assert.deepStrictEqual(yield* outcome(running), Outcome.Stopped({ reason: "SIGINT" }))
      // The grace period ended with the clock where the second signal found it.
      assert.strictEqual(yield* Clock.currentTimeMillis, 1000)
      assert.strictEqual(fake.terminal.stderr(), stoppingLine("SIGINT"))
    }))

  it.effect("a program still not done 2 s after the second signal is left behind, still listening for signals until then", () =>
    Effect.gen(function*() {
      const fake = fakeProcess()
      const unstuck = yield* Deferred.make<void>()
      const { graceOver, program, stopping } = yield* gracefulProgram(Deferred.await(unstuck))
      const running = yield* start(fake, program)
      fake.signals.emit("SIGINT")
      yield* completed(stopping)
      fake.signals.emit("SIGINT")
      yield* completed(graceOver)
      yield* sleeping(GIVE_UP)
      // A third signal changes nothing, and no signal finds the process without a listener.
      fake.signals.emit("SIGHUP")
      yield* TestClock.adjust(Duration.subtract(GIVE_UP, Duration.millis(1)))
      assert.isTrue(Option.isNone(yield* Fiber.poll(running)))
      assert.deepStrictEqual(fake.listeners(), [1, 1, 1, 1, 1])
      yield* TestClock.adjust(Duration.millis(1))
      assert.deepStrictEqual(yield* outcome(running), Outcome.Stopped({ reason: "SIGINT" }))
      assert.deepStrictEqual(fake.listeners(), [0, 0, 0, 0, 0])
      assert.strictEqual(fake.terminal.stderr(), stoppingLine("SIGINT"))
      yield* Deferred.succeed(unstuck, undefined)
    }))

  it.effect("interrupted itself, it interrupts the program too, and stops listening", () =>
    Effect.gen(function*() {
      const fake = fakeProcess()
      const interrupted = yield* Deferred.make<void>()
      const running = yield* start(fake, Effect.as(Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)), Outcome.Done()))
      yield* Fiber.interrupt(running)
      assert.isTrue(yield* Deferred.isDone(interrupted))
      assert.deepStrictEqual(fake.listeners(), [0, 0, 0, 0, 0])
    }))

  it.effect("without a stop: a program interrupted from within (Ctrl-C at a question) is Interrupted, a defect Crashed and told in one line", () =>
    Effect.gen(function*() {
      const quit = fakeProcess()
      assert.deepStrictEqual(yield* outcome(yield* start(quit, Effect.interrupt)), Outcome.Interrupted())
      assert.strictEqual(quit.terminal.stderr(), "")
      const broken = fakeProcess()
      assert.deepStrictEqual(yield* outcome(yield* start(broken, Effect.die(new Error("boom")))), Outcome.Crashed())
      assert.strictEqual(broken.terminal.stderr(), "spool: unexpected failure: Error: boom\n")
    }))
})
