import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit } from "effect"
import { run } from "./Cli.js"
import { describeFailure } from "./Failure.js"
import { ExitCode } from "./ExitCode.js"

let signalled: NodeJS.Signals | null = null

const program = run(process.argv).pipe(
  Effect.catchAll((error) =>
    Effect.sync(() => {
      const failure = describeFailure(error)
      if (failure.message !== null) process.stderr.write(`spool: ${failure.message}\n`)
      process.exitCode = failure.exitCode
    })
  ),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (signalled !== null) return onExit(signalled === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted)
    if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) {
      process.stderr.write(`spool: unexpected failure: ${Cause.pretty(exit.cause).split("\n")[0]}\n`)
      return onExit(ExitCode.Failed)
    }
    onExit(typeof process.exitCode === "number" ? process.exitCode : 0)
  }
})

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.prependListener(signal, () => {
    // A second signal means "stop now": runMain's own handler has started the graceful stop already.
    if (signalled !== null) process.exit(signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted)
    signalled = signal
  })
}
