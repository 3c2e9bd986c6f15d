import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Ref } from "effect"
import { appendFile, readTextFile, writeFileAtomic } from "./AtomicFile.js"
import type { ChangeId } from "../domain/Domain.js"
import type { StateError } from "./StateError.js"
import { Workspace } from "./Workspace.js"

/**
 * The per-change context file (`.spool/.state/ralph/<change-id>/context.txt`; in an ito tree,
 * ito's own `context.md`) a person edits while a loop runs.
 */
export class ContextStore extends Context.Tag("@spool/core/ContextStore")<ContextStore, {
  /** The current context, trimmed; empty when there is none. Read afresh on every call. */
  readonly load: (changeId: ChangeId) => Effect.Effect<string, StateError>
  readonly append: (changeId: ChangeId, text: string) => Effect.Effect<void, StateError>
  readonly clear: (changeId: ChangeId) => Effect.Effect<void, StateError>
}>() {
  static readonly fileName = "context.txt"

  static readonly layer = Layer.effect(
    ContextStore,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const workspace = yield* Workspace
      const file = (changeId: ChangeId) => path.join(workspace.stateDir(changeId), workspace.tree.contextFile)
      return {
        load: (changeId) =>
          readTextFile(fs, file(changeId), {
            maxBytes: 1024 * 1024,
            hint: "clear it with spool ralph --clear-context and add shorter context"
          }).pipe(Effect.map((text) => (text ?? "").trim())),
        append: (changeId, text) =>
          workspace.ensureStateDir(changeId).pipe(
            Effect.zipRight(appendFile(fs, path, file(changeId), `${text.trim()}\n`))
          ),
        clear: (changeId) =>
          workspace.ensureStateDir(changeId).pipe(Effect.zipRight(writeFileAtomic(fs, path, file(changeId), "")))
      }
    })
  )

  static readonly layerMemory = Layer.effect(
    ContextStore,
    Effect.gen(function*() {
      const store = yield* Ref.make(new Map<string, string>())
      return {
        load: (changeId) => Ref.get(store).pipe(Effect.map((map) => (map.get(changeId) ?? "").trim())),
        append: (changeId, text) =>
          Ref.update(store, (map) => new Map(map).set(changeId, `${map.get(changeId) ?? ""}${text.trim()}\n`)),
        clear: (changeId) => Ref.update(store, (map) => new Map(map).set(changeId, ""))
      }
    })
  )
}
