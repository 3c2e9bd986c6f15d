import { FileSystem } from "@effect/platform"
import { Effect, Ref } from "effect"
import { readTextFile } from "../state/AtomicFile.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { StateError } from "../state/StateError.js"
import { readTaskList } from "../tree/TreeTasks.js"
import { type Change, relativeDirOf, treeOf } from "../state/Workspace.js"

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
    const tree = treeOf(change)
    const relativeDir = relativeDirOf(change)
    // The directory holding the tree, wherever the change is read from (the main work tree or a worktree).
    const root = change.dir.slice(0, Math.max(0, change.dir.length - relativeDir.length - 1))
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
      Effect.map((text) => readTaskList(tree.taskFormat, text))
    )

    /** The documents quoted after the proposal (spec-kit's plan) that exist; one not written yet is left out. */
    const readQuoted = Effect.forEach(change.quoted ?? [], (doc) =>
      readTextFile(fs, doc.path, { maxBytes: 8 * 1024 * 1024, hint: "split it, or move detail into other files" }).pipe(
        Effect.map((text) => (text === null ? [] : [{ title: doc.title, body: text }]))
      )).pipe(Effect.map((docs) => docs.flat()))

    const gitOrWarn = <A>(effect: Effect.Effect<A, { readonly message: string }>, fallback: A) =>
      Effect.catchAll(effect, (error) => Effect.as(warnGit(error.message), fallback))

    const changeFiles = new Set([tree.proposal, tree.tasks, ...tree.quoted.map((doc) => doc.file)])
    const named = (name: string) =>
      !changeFiles.has(name) && !name.split("/").some((part) => part.startsWith(".")) &&
      (tree.documents === "all" || name.endsWith(".md")) && `${change.dir}/${name}` !== change.modulePath
    /** The project's documents the tree names (OpenSpec's config, spec-kit's constitution) that exist. */
    const projectDocuments = Effect.filter(tree.projectDocuments, (file) =>
      fs.stat(`${root}/${file}`).pipe(
        Effect.map((info) => info.type === "File"),
        Effect.orElseSucceed(() => false)
      ))
    /**
     * The change's other documents (`design.md`, `specs/<capability>/spec.md`, ...; in a spec-kit
     * feature every file, its contracts too), then the project's, by their paths from the repository root.
     */
    const otherDocuments = Effect.zipWith(
      fs.readDirectory(change.dir, { recursive: true }).pipe(
        Effect.flatMap((names) =>
          Effect.filter(names.map((name) => name.split("\\").join("/")).filter(named), (name) =>
            fs.stat(`${change.dir}/${name}`).pipe(
              Effect.map((info) => info.type === "File"),
              Effect.orElseSucceed(() => false)
            ))
        ),
        Effect.map((names) => names.sort().map((name) => `${relativeDir}/${name}`)),
        Effect.orElseSucceed((): ReadonlyArray<string> => [])
      ),
      projectDocuments,
      (own, project): ReadonlyArray<string> => [...own, ...project]
    )

    return { readDocument, readTasks, readQuoted, otherDocuments, gitOrWarn }
  })

export type LoopInputs = Effect.Effect.Success<ReturnType<typeof makeLoopInputs>>
