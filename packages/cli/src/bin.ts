import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Exit, Layer } from "effect"
import { main } from "./Cli.js"
import { runMain } from "./edge/Runner.js"
import * as Started from "./edge/Started.js"
import * as StopSignals from "./edge/StopSignals.js"
import { crashed, stoppable } from "./edge/Stoppable.js"
import { exitCodeOf, type Outcome } from "./ExitCode.js"
import * as Invocation from "@spool/app/host"
import * as ProcessExecutor from "./ProcessExecutor.js"
import * as TerminalReporter from "./TerminalReporter.js"

// The composition root. The process is read here, once: everything below takes it from here, and
// its stdout and stderr have one writer.
const started = Started.readMain(process)
const terminal = TerminalReporter.makeTerminal(started.stdout, started.stderr, started.env)

const program = stoppable(main(started.argv)).pipe(
  Effect.provide(
    Layer.mergeAll(
      Layer.succeed(Invocation.Invocation, started.invocation),
      TerminalReporter.layer(terminal),
      // Agents run through ProcessExecutor: their output is read in batches.
      ProcessExecutor.layer(started.env),
      StopSignals.layer(started.signals, [started.stdout, started.stderr])
    )
  ),
  Effect.provide(NodeContext.layer)
)

runMain(started.exit)(program, {
  disableErrorReporting: true,
  // `program` ends with how spool ended; only a defect outside it fails.
  teardown: (exit, onExit) => onExit(exitCodeOf(Exit.isSuccess(exit) ? exit.value as Outcome : crashed(terminal, exit.cause)))
})
