import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { HistoryStore, Workspace } from "@spool/core"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { colourEnabled, palette } from "./Colour.js"
import { ExitCode } from "./ExitCode.js"
import { describeFailure, errorLine } from "./Failure.js"
import { locate } from "./ralph/WorktreeLocation.js"
import { parseStatusArgs } from "./StatusArgs.js"
import { showStatus } from "./Status.js"

// `spool ralph --status`, without the command-line parser: it answers the same, sooner.
const args = parseStatusArgs(process.argv.slice(2)) ?? { change: null, json: false }
const location = locate(process.cwd())
const change = args.change ?? location.worktreeChange

const program = Effect.gen(function*() {
  const changeId = change === null ? null : (yield* (yield* Workspace).resolveChange(change)).id
  yield* showStatus(changeId, args.json, {
    print: (text) => Effect.sync(() => void process.stdout.write(`${text}\n`)),
    palette: palette(colourEnabled(process.stdout, process.env))
  })
}).pipe(
  Effect.provide(HistoryStore.layer.pipe(Layer.provideMerge(Workspace.layer(location.workspaceCwd)))),
  Effect.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
)

Effect.runPromiseExit(program).then((exit) => {
  if (Exit.isSuccess(exit)) return
  const error = Cause.failureOption(exit.cause)
  const failure = Option.isSome(error)
    ? describeFailure(error.value)
    : { message: `unexpected failure: ${Cause.pretty(exit.cause).split("\n")[0]}`, exitCode: ExitCode.Failed }
  process.stderr.write(errorLine(palette(colourEnabled(process.stderr, process.env)), failure.message))
  process.exitCode = failure.exitCode
})
