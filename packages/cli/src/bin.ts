import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { currentGracePeriod } from "@spool/core"
import { Cause, Deferred, Duration, Effect, Exit, FiberId } from "effect"
import { run } from "./Cli.js"
import { ExitCode } from "./ExitCode.js"
import { describeFailure, writeError } from "./Failure.js"
import { startMemoryGovernor } from "./MemoryGovernor.js"
import * as ProcessExecutor from "./ProcessExecutor.js"
import { eraseStatusLine } from "./TerminalReporter.js"

startMemoryGovernor()

let signalled: NodeJS.Signals | null = null
const exitCodeFor = (signal: NodeJS.Signals) => (signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted)

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
    if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) {
      writeError(`unexpected failure: ${Cause.pretty(exit.cause).split("\n")[0]}`)
      return onExit(ExitCode.Failed)
    }
    onExit(typeof process.exitCode === "number" ? process.exitCode : 0)
  }
})

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.prependListener(signal, () => {
    if (signalled === null) {
      signalled = signal
      eraseStatusLine()
      process.stderr.write("\n")
      writeError(`stopping (${signal}); again to stop at once`)
      return
    }
    Deferred.unsafeDone(stopNow, Exit.void)
    setTimeout(() => process.exit(exitCodeFor(signalled ?? signal)), 2000).unref()
  })
}
