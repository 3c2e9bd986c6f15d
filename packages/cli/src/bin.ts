import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { currentGracePeriod } from "@spool/core"
import { Cause, Deferred, Duration, Effect, Exit, FiberId, Layer } from "effect"
import { main } from "./Cli.js"
import { exitCodeOf, Outcome, type StopSignal } from "./ExitCode.js"
import * as Invocation from "@spool/app/host"
import * as ProcessExecutor from "./ProcessExecutor.js"
import * as TerminalReporter from "./TerminalReporter.js"

// The edge: the process is read here, once, and handed down; its stdout and stderr have one writer.
// The process, read once: everything below takes it from here.
const invocation: Invocation.InvocationShape = {
  cwd: process.cwd(),
  env: process.env,
  pid: process.pid,
  stdinIsTTY: process.stdin.isTTY === true,
  isRoot: process.getuid?.() === 0
}
const terminal = TerminalReporter.makeTerminal(process.stdout, process.stderr, invocation.env)

/** Why the loop is being stopped from outside, once it is. */
let signalled: StopSignal | null = null

// The first Ctrl-C (or SIGTERM) stops the loop gracefully: the agent gets SIGTERM and a grace
// period. A second one ends the grace period at once, and the process soon after.
const stopNow = Deferred.unsafeMake<void>(FiberId.none)
const GRACE = Duration.seconds(5)

const program = main(process.argv).pipe(
  Effect.locally(currentGracePeriod, Effect.raceFirst(Effect.sleep(GRACE), Deferred.await(stopNow))),
  Effect.provide(
    Layer.mergeAll(
      Layer.succeed(Invocation.Invocation, invocation),
      TerminalReporter.layer(terminal),
      // Agents run through ProcessExecutor: their output is read in batches.
      ProcessExecutor.layer(invocation.env)
    )
  ),
  Effect.provide(NodeContext.layer)
)

/** How spool ended: a stop from outside wins over what the program made of it. */
const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Outcome =>
  signalled !== null
    ? Outcome.Stopped({ reason: signalled })
    : Exit.isSuccess(exit)
    // What `program` succeeds with; the runtime's teardown is told of any program.
    ? exit.value as Outcome
    // Ctrl-C at a question arrives as a key, not a signal: the program is interrupted all the same.
    : Cause.isInterruptedOnly(exit.cause)
    ? Outcome.Interrupted()
    : Outcome.Crashed()

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    const outcome = outcomeOf(exit)
    if (outcome._tag === "Crashed" && Exit.isFailure(exit)) {
      terminal.error(`unexpected failure: ${Cause.pretty(exit.cause).split("\n")[0]}`)
    }
    onExit(exitCodeOf(outcome))
  }
})

/** The runtime interrupts the program on SIGTERM; other reasons to stop are forwarded to it. */
let forwarding = false
const stop = (signal: StopSignal) => {
  if (forwarding) return
  if (signalled === null) {
    signalled = signal
    terminal.erase()
    if (signal !== "EPIPE") terminal.error(`stopping (${signal}); again to stop at once`, { afterBreak: true })
    if (signal !== "SIGINT" && signal !== "SIGTERM") {
      forwarding = true
      process.emit("SIGTERM", "SIGTERM")
      forwarding = false
    }
    return
  }
  Deferred.unsafeDone(stopNow, Exit.void)
  setTimeout(() => process.exit(exitCodeOf(Outcome.Stopped({ reason: signalled ?? signal }))), 2000).unref()
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.prependListener(signal, () => stop(signal))
// Output nobody reads any more (the reader of a pipe quit): stop the loop and the agent as for a signal.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "EIO") stop("EPIPE")
  })
}
