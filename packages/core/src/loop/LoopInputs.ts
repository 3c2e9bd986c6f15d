import { FileSystem } from "@effect/platform"
import { Effect, Ref } from "effect"
import { readTextFile } from "../state/AtomicFile.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { StateError } from "../state/StateError.js"
import { parseTasks } from "../prompt/Tasks.js"
import type { Change } from "../state/Workspace.js"

/** A warning given the first time only. */
const makeWarnOnce = Effect.gen(function*() {
  const reporter = yield* LoopReporter
  const warned = yield* Ref.make(false)
  return (message: string) => Effect.flatMap(Ref.getAndSet(warned, true), (already) => (already ? Effect.void : reporter.warn(message)))
})

/**
 * What the loop reads for every iteration: the change's documents (missing ones are errors), its
 * tasks and git. Tasks and git only steer the agent: when they cannot be read, the loop warns
 * once and goes on without them.
 */
export const makeLoopInputs = (change: Change) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const warnGit = yield* makeWarnOnce
    const warnTasks = yield* makeWarnOnce

    const readDocument = (path: string) =>
      readTextFile(fs, path, { maxBytes: 8 * 1024 * 1024, hint: "split it, or move detail into other files" }).pipe(
        Effect.flatMap((text) =>
          text === null ? Effect.fail(new StateError({ reason: "Read", path, detail: "the file is missing" })) : Effect.succeed(text)
        )
      )

    const readTasks = readTextFile(fs, change.tasksPath, { maxBytes: 4 * 1024 * 1024, hint: "it is ignored" }).pipe(
      Effect.catchAll((error) => Effect.as(warnTasks(error.message), null)),
      Effect.map(parseTasks)
    )

    const gitOrWarn = <A>(effect: Effect.Effect<A, { readonly message: string }>, fallback: A) =>
      Effect.catchAll(effect, (error) => Effect.as(warnGit(error.message), fallback))

    const changeFiles = new Set(["proposal.md", "tasks.md"])
    /** The change's other markdown (`design.md`, `specs/<capability>/spec.md`, ...), by their paths from the repository root. */
    const otherDocuments = fs.readDirectory(change.dir, { recursive: true }).pipe(
      Effect.map((names) =>
        names
          .map((name) => name.split("\\").join("/"))
          .filter((name) => name.endsWith(".md") && !changeFiles.has(name) && `${change.dir}/${name}` !== change.modulePath)
          .sort()
          .map((name) => `.spool/changes/${change.id}/${name}`)
      ),
      Effect.orElseSucceed((): ReadonlyArray<string> => [])
    )

    return { readDocument, readTasks, otherDocuments, gitOrWarn }
  })

export type LoopInputs = Effect.Effect.Success<ReturnType<typeof makeLoopInputs>>
