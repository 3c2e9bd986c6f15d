import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { FileSystem, Path } from "@effect/platform"
import { findTrees, HistoryStore, layoutNames, LoopLock, SETTINGS_FILE, Workspace } from "@spool/core"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { colourEnabled, palette } from "./Colour.js"
import { ExitCode } from "./ExitCode.js"
import { describeFailure, errorLine } from "./Failure.js"
import { lockIdentity } from "@spool/app/host"
import { locate } from "./ralph/WorktreeLocation.js"
import { parseStatusArgs } from "./StatusArgs.js"
import { showStatus } from "./Status.js"

// `spool ralph --status`, without the command-line parser: it answers the same, sooner.
const args = parseStatusArgs(process.argv.slice(2)) ?? { change: null, json: false }
const location = locate(process.cwd())
const change = args.change ?? location.worktreeChange

/** The tree `.spool/config.json` names (`"ralph": {"layout": ...}`), for a repository holding several; its mistakes are the full command's to tell. */
const layoutSetting = (root: string) => {
  try {
    const named = (JSON.parse(readFileSync(join(root, SETTINGS_FILE), "utf8")) as { ralph?: { layout?: unknown } })?.ralph?.layout
    return layoutNames.find((name) => name === named) ?? null
  } catch {
    return null
  }
}

/** The tree found as the full command finds it: the one the settings file names, or the only one there. */
const workspace = Layer.unwrapEffect(
  Effect.gen(function*() {
    const trees = yield* findTrees(yield* FileSystem.FileSystem, yield* Path.Path, location.workspaceCwd)
    return Workspace.layer(location.workspaceCwd, trees === null ? null : layoutSetting(trees.root))
  })
)

const program = Effect.gen(function*() {
  const changeId = change === null ? null : (yield* (yield* Workspace).resolveChange(change)).id
  yield* showStatus(changeId, args.json, {
    print: (text) => Effect.sync(() => void process.stdout.write(`${text}\n`)),
    palette: palette(colourEnabled(process.stdout, process.env))
  })
}).pipe(
  // The locks tell a loop that runs from one that was killed.
  Effect.provide(Layer.merge(HistoryStore.layer, LoopLock.layer(lockIdentity(process.pid))).pipe(Layer.provideMerge(workspace))),
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
