import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import { StateError } from "./StateError.js"

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/** Writes `content` to a temporary sibling and renames it over `path`: readers see the old or the new file, never half of one. */
export const writeFileAtomic = (fs: FileSystem.FileSystem, path: Path.Path, file: string, content: string) =>
  Effect.gen(function*() {
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${Math.random().toString(36).slice(2)}.tmp`)
    yield* fs.makeDirectory(path.dirname(file), { recursive: true })
    yield* fs.writeFileString(tmp, content, { mode: 0o600 })
    yield* fs.rename(tmp, file).pipe(Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)))
  }).pipe(Effect.mapError((cause) => new StateError({ reason: "Write", path: file, detail: describe(cause) })))

/** Reads a text file; a missing file is `null`. */
export const readFileOrNull = (fs: FileSystem.FileSystem, file: string) =>
  fs.readFileString(file).pipe(
    Effect.map((text): string | null => text),
    Effect.catchIf(
      (error) => error._tag === "SystemError" && error.reason === "NotFound",
      () => Effect.succeed(null)
    ),
    Effect.mapError((cause) => new StateError({ reason: "Read", path: file, detail: describe(cause) }))
  )

/** Appends text to a file, creating it and its directory when missing. */
export const appendFile = (fs: FileSystem.FileSystem, path: Path.Path, file: string, content: string) =>
  Effect.gen(function*() {
    yield* fs.makeDirectory(path.dirname(file), { recursive: true })
    yield* fs.writeFileString(file, content, { flag: "a", mode: 0o600 })
  }).pipe(Effect.mapError((cause) => new StateError({ reason: "Write", path: file, detail: describe(cause) })))
