import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { currentGracePeriod } from "@spool/core"
import { Cause, Deferred, Duration, Effect, Exit, FiberId } from "effect"
import { run } from "./Cli.js"
import { ExitCode } from "./ExitCode.js"
import { describeFailure, writeError } from "./Failure.js"
import * as ProcessExecutor from "./ProcessExecutor.js"
import { eraseStatusLine } from "./TerminalReporter.js"

/** Why the loop is being stopped from outside: a signal, or its output pipe closing. */
type Stop = NodeJS.Signals | "EPIPE"
let signalled: Stop | null = null
const exitCodes: Partial<Record<Stop, number>> = {
  SIGTERM: ExitCode.Terminated,
  SIGHUP: ExitCode.HangUp,
  EPIPE: ExitCode.PipeClosed
}
const exitCodeFor = (stop: Stop) => exitCodes[stop] ?? ExitCode.Interrupted

// The first Ctrl-C (or SIGTERM) stops the loop gracefully: the agent gets SIGTERM and a grace
// period. A second one ends the grace period at once, and the process soon after.
const stopNow = Deferred.unsafeMake<void>(FiberId.none)
const GRACE = Duration.seconds(5)

const program = run(process.argv).pipe(
  Effect.catchAll((error) =>
    Effect.sync(() => {
      const failure = describeFailure(error)
      writeError(failure.message)
      process.exitCode = failure.exitCode
    })
  ),
  Effect.locally(currentGracePeriod, Effect.raceFirst(Effect.sleep(GRACE), Deferred.await(stopNow))),
  // Agents run through ProcessExecutor: their output is read in batches.
  Effect.provide(ProcessExecutor.layer),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (signalled !== null) return onExit(exitCodeFor(signalled))
    // Ctrl-C at a question arrives as a key, not a signal: the program is interrupted all the same.
    if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) return onExit(ExitCode.Interrupted)
    if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) {
      writeError(`unexpected failure: ${Cause.pretty(exit.cause).split("\n")[0]}`)
      return onExit(ExitCode.Failed)
    }
    onExit(typeof process.exitCode === "number" ? process.exitCode : 0)
  }
})

/** The runtime interrupts the program on SIGTERM; other reasons to stop are forwarded to it. */
let forwarding = false
const stop = (reason: Stop) => {
  if (forwarding) return
  if (signalled === null) {
    signalled = reason
    eraseStatusLine()
    if (reason !== "EPIPE") {
      process.stderr.write("\n")
      writeError(`stopping (${reason}); again to stop at once`)
    }
    if (reason !== "SIGINT" && reason !== "SIGTERM") {
      forwarding = true
      process.emit("SIGTERM", "SIGTERM")
      forwarding = false
    }
    return
  }
  Deferred.unsafeDone(stopNow, Exit.void)
  setTimeout(() => process.exit(exitCodeFor(signalled ?? reason)), 2000).unref()
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.prependListener(signal, () => stop(signal))
// Output nobody reads any more (the reader of a pipe quit): stop the loop and the agent as for a signal.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "EIO") stop("EPIPE")
  })
}
