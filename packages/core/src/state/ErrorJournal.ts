import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Ref } from "effect"
import { appendFile, readFileOrNull } from "./AtomicFile.js"
import type { ChangeId } from "../domain/Domain.js"
import { formatEntry, type JournalEntry, parseEntries } from "./JournalEntry.js"
import { StateError } from "./StateError.js"
import { Workspace } from "./Workspace.js"

/**
 * The change's journal of failed iterations, `.spool/.state/ralph/<change-id>/errors.md`:
 * appended to only, kept across runs, archived when the change is done.
 */
// Stryker disable next-line StringLiteral: the key only tells the service apart in a context, and no other service has an empty one
export class ErrorJournal extends Context.Tag("@spool/core/ErrorJournal")<ErrorJournal, {
  readonly path: (changeId: ChangeId) => string
  readonly append: (changeId: ChangeId, entry: JournalEntry) => Effect.Effect<void, StateError>
  readonly read: (changeId: ChangeId) => Effect.Effect<ReadonlyArray<JournalEntry>, StateError>
  /** Moves a non-empty journal to `errors-<stamp>.md` beside it and leaves an empty one; the archive's path, or null. */
  readonly archive: (changeId: ChangeId, stamp: string) => Effect.Effect<string | null, StateError>
}>() {
  static readonly layer = Layer.effect(
    ErrorJournal,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const workspace = yield* Workspace
      const file = (changeId: ChangeId) => path.join(workspace.stateDir(changeId), "errors.md")
      return {
        path: file,
        append: (changeId, entry) =>
          workspace.ensureStateDir(changeId).pipe(Effect.zipRight(appendFile(fs, path, file(changeId), formatEntry(entry)))),
        // Stryker disable next-line StringLiteral: a missing journal then reads as text without an entry delimiter, which parses to no entries as empty text does
        read: (changeId) => readFileOrNull(fs, file(changeId)).pipe(Effect.map((text) => parseEntries(text ?? ""))),
        archive: (changeId, stamp) =>
          Effect.gen(function*() {
            const current = file(changeId)
            const text = yield* readFileOrNull(fs, current)
            if (text === null || text.trim() === "") return null
            const archived = path.join(path.dirname(current), `errors-${stamp}.md`)
            const fail = (cause: { message: string }) =>
              new StateError({ reason: "Write", path: current, detail: cause.message })
            yield* fs.rename(current, archived).pipe(Effect.mapError(fail))
            yield* fs.writeFileString(current, "", { mode: 0o600 }).pipe(Effect.mapError(fail))
            return archived
          })
      }
    })
  )

  static readonly layerMemory = Layer.effect(
    ErrorJournal,
    Effect.gen(function*() {
      const journals = yield* Ref.make(new Map<string, ReadonlyArray<JournalEntry>>())
      return {
        path: (changeId) => `memory:${changeId}/errors.md`,
        // Through the text format and back, so memory and disk agree on what survives a round trip.
        append: (changeId, entry) =>
          Ref.update(journals, (map) =>
            new Map(map).set(changeId, [...(map.get(changeId) ?? []), ...parseEntries(formatEntry(entry))])),
        read: (changeId) => Ref.get(journals).pipe(Effect.map((map) => map.get(changeId) ?? [])),
        archive: (changeId, stamp) =>
          Ref.modify(journals, (map) =>
            (map.get(changeId) ?? []).length === 0
              ? [null, map]
              : [`memory:${changeId}/errors-${stamp}.md`, new Map(map).set(changeId, [])])
      }
    })
  )
}
