import { FileSystem, type Path } from "@effect/platform"
import { Effect, Random } from "effect"
import { StateError } from "./StateError.js"

const explained: Record<string, string> = {
  ENOENT: "no such file or directory",
  ENOTDIR: "a parent path is not a directory",
  EISDIR: "it is a directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EMFILE: "too many open files",
  ELOOP: "too many symbolic links"
}

/** A platform error as a few words a person can act on. */
export const describe = (cause: unknown) => {
  if (typeof cause === "object" && cause !== null && "reason" in cause && "message" in cause) {
    const { reason, message } = cause as { reason: string; message: string }
    const code = /\b(E[A-Z]+)\b/.exec(message)?.[1]
    return code === undefined ? String(reason) : explained[code] ?? `${reason} (${code})`
  }
  return cause instanceof Error ? cause.message : String(cause)
}

const isNotFound = (error: { readonly _tag: string; readonly reason?: string }) =>
  error._tag === "SystemError" && error.reason === "NotFound"

/** A short random tag that keeps a temporary file's name apart from its siblings', from `Random`. */
// Stryker disable next-line MethodExpression: only temporary files' names (as unique with the leading "0.")
export const randomTag = Effect.map(Random.next, (n) => n.toString(36).slice(2))

/** Writes `content` to a temporary sibling and renames it over `path`: readers see the old or the new file, never half of one. */
export const writeFileAtomic = (fs: FileSystem.FileSystem, path: Path.Path, file: string, content: string) =>
  Effect.flatMap(randomTag, (tag) => {
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${tag}.tmp`)
    return Effect.gen(function*() {
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      yield* fs.writeFileString(tmp, content, { mode: 0o600 })
      yield* fs.rename(tmp, file)
    }).pipe(
      Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)),
      Effect.mapError((cause) => new StateError({ reason: "Write", path: file, detail: describe(cause) }))
    )
  })

export interface ReadLimits {
  /** Larger files are refused with a `TooLarge` error carrying `hint`. */
  readonly maxBytes: number
  readonly hint: string
}

const MiB = 1024 * 1024

/** Reads a text file; a missing file is `null`; a huge or binary one is a clear error, never a crash. */
export const readTextFile = (fs: FileSystem.FileSystem, file: string, limits: ReadLimits = { maxBytes: 16 * MiB, hint: "" }) =>
  Effect.gen(function*() {
    const info = yield* fs.stat(file)
    if (info.type === "Directory") {
      return yield* new StateError({ reason: "Read", path: file, detail: "it is a directory" })
    }
    if (Number(info.size) > limits.maxBytes) {
      return yield* new StateError({
        reason: "TooLarge",
        path: file,
        detail: `${Number(info.size)} bytes, over the limit of ${limits.maxBytes}${limits.hint === "" ? "" : `; ${limits.hint}`}`
      })
    }
    const text = yield* fs.readFileString(file)
    if (text.includes("\u0000")) {
      return yield* new StateError({ reason: "NotText", path: file, detail: limits.hint === "" ? "replace it with text" : limits.hint })
    }
    return text as string | null
  }).pipe(
    Effect.catchIf((error) => !(error instanceof StateError) && isNotFound(error), () => Effect.succeed(null)),
    Effect.mapError((cause) =>
      cause instanceof StateError ? cause : new StateError({ reason: "Read", path: file, detail: describe(cause) })
    )
  )

/** Reads a small state file of spool's own; a missing file is `null`. */
export const readFileOrNull = (fs: FileSystem.FileSystem, file: string) =>
  readTextFile(fs, file, { maxBytes: 64 * MiB, hint: "delete it; spool writes it anew" })

/** Appends text to a file, creating it and its directory when missing. */
export const appendFile = (fs: FileSystem.FileSystem, path: Path.Path, file: string, content: string) =>
  Effect.gen(function*() {
    yield* fs.makeDirectory(path.dirname(file), { recursive: true })
    yield* fs.writeFileString(file, content, { flag: "a", mode: 0o600 })
  }).pipe(Effect.mapError((cause) => new StateError({ reason: "Write", path: file, detail: describe(cause) })))

/**
 * Appends one line to a line-oriented file. A line cut short by a crash has no newline: the next
 * one starts on a line of its own, so at most that one line is lost (readers skip it).
 */
export const appendLine = (fs: FileSystem.FileSystem, path: Path.Path, file: string, line: string) =>
  Effect.gen(function*() {
    yield* fs.makeDirectory(path.dirname(file), { recursive: true })
    const endsWithNewline = yield* Effect.scoped(
      Effect.gen(function*() {
        const handle = yield* fs.open(file, { flag: "a+", mode: 0o600 })
        const size = Number((yield* handle.stat).size)
        if (size === 0) return true
        const last = new Uint8Array(1)
        yield* handle.seek(FileSystem.Size(size - 1), "start")
        yield* handle.read(last)
        return last[0] === 10
      })
    )
    yield* fs.writeFileString(file, `${endsWithNewline ? "" : "\n"}${line}\n`, { flag: "a", mode: 0o600 })
  }).pipe(Effect.mapError((cause) => new StateError({ reason: "Write", path: file, detail: describe(cause) })))
