import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { FileSystem, Path } from "@effect/platform"
import { findTrees, HistoryStore, layoutNames, LoopLock, SETTINGS_FILE, Workspace } from "@spool/core"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { colourEnabled, palette } from "./Colour.js"
import * as Started from "./edge/Started.js"
import { ExitCode } from "./ExitCode.js"
import { describeFailure, errorLine } from "./Failure.js"
import { lockIdentity } from "@spool/app/host"
import { locate } from "./ralph/WorktreeLocation.js"
import { parseStatusArgs } from "./StatusArgs.js"
import { showStatus } from "./Status.js"

// `spool ralph --status`, without the command-line parser: it answers the same, sooner.
// The process, read once: everything below takes it from here.
const started = Started.read(process)

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
const workspace = (workspaceCwd: string) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const trees = yield* findTrees(yield* FileSystem.FileSystem, yield* Path.Path, workspaceCwd)
      return Workspace.layer(workspaceCwd, trees === null ? null : layoutSetting(trees.root))
    })
  )

/** The status of the change `started` asks for (or of every loop): the exit code, when it is not 0. */
const status = (started: Started.Started): Promise<number | null> => {
  const args = parseStatusArgs(started.argv.slice(2)) ?? { change: null, json: false }
  const location = locate(started.cwd)
  const change = args.change ?? location.worktreeChange
  const program = Effect.gen(function*() {
    const changeId = change === null ? null : (yield* (yield* Workspace).resolveChange(change)).id
    yield* showStatus(changeId, args.json, {
      print: (text) => Effect.sync(() => void started.stdout.write(`${text}\n`)),
      palette: palette(colourEnabled(started.stdout, started.env))
    })
  }).pipe(
    // The locks tell a loop that runs from one that was killed.
    Effect.provide(Layer.merge(HistoryStore.layer, LoopLock.layer(lockIdentity(started.pid))).pipe(Layer.provideMerge(workspace(location.workspaceCwd)))),
    Effect.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )
  return Effect.runPromiseExit(program).then((exit) => {
    if (Exit.isSuccess(exit)) return null
    const error = Cause.failureOption(exit.cause)
    const failure = Option.isSome(error)
      ? describeFailure(error.value)
      : { message: `unexpected failure: ${Cause.pretty(exit.cause).split("\n")[0]}`, exitCode: ExitCode.Failed }
    started.stderr.write(errorLine(palette(colourEnabled(started.stderr, started.env)), failure.message))
    return failure.exitCode
  })
}

status(started).then((code) => {
  if (code !== null) process.exitCode = code
})
