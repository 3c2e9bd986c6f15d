import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Option, Ref, Schema, type Scope } from "effect"
import { appendLine, readFileOrNull, writeFileAtomic } from "./AtomicFile.js"
import { type ChangeId, IterationRecord, LoopState } from "../domain/Domain.js"
import { StateError } from "./StateError.js"
import { Workspace } from "./Workspace.js"

export interface HistoryTail {
  /** The most recent records, oldest first. */
  readonly records: ReadonlyArray<IterationRecord>
  /** Lines in the range read that could not be decoded (a line cut short by a crash, or edited by hand). */
  readonly skipped: number
}

/** The log of iteration `iteration` of `run`, in the change's state directory's `logs/`. */
export const iterationLogName = (run: string, iteration: number) => `${run}-${String(iteration).padStart(3, "0")}.log`

/** Where a full iteration log goes; `write` appends. */
export interface IterationLog {
  readonly path: string
  /** Appends text, or bytes as they are. */
  readonly write: (data: string | Uint8Array) => Effect.Effect<void, StateError>
}

/**
 * Loop state and iteration history of a change: `state.json` (rewritten atomically) and
 * `history.jsonl` (one record a line, append-only), plus one log file per iteration under `logs/`.
 */
// Stryker disable next-line StringLiteral: the key only tells services apart in a context, and no other service has an empty one
export class HistoryStore extends Context.Tag("@spool/core/HistoryStore")<HistoryStore, {
  readonly readState: (changeId: ChangeId) => Effect.Effect<Option.Option<LoopState>, StateError>
  readonly writeState: (changeId: ChangeId, state: LoopState) => Effect.Effect<void, StateError>
  readonly append: (changeId: ChangeId, record: IterationRecord) => Effect.Effect<void, StateError>
  /** The last `limit` records. */
  readonly recent: (changeId: ChangeId, limit: number) => Effect.Effect<HistoryTail, StateError>
  readonly openLog: (
    changeId: ChangeId,
    run: string,
    iteration: number
  ) => Effect.Effect<IterationLog, StateError, Scope.Scope>
}>() {
  static readonly layer = Layer.effect(
    HistoryStore,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const workspace = yield* Workspace
      const stateFile = (id: ChangeId) => path.join(workspace.stateDir(id), workspace.tree.stateFile)
      const historyFile = (id: ChangeId) => path.join(workspace.stateDir(id), "history.jsonl")

      const readState = (changeId: ChangeId) =>
        Effect.gen(function*() {
          const file = stateFile(changeId)
          const text = yield* readFileOrNull(fs, file)
          if (text === null) return Option.none()
          return Option.some(yield* decodeState(text, file))
        })

      const writeState = (changeId: ChangeId, state: LoopState) =>
        workspace.ensureStateDir(changeId).pipe(
          Effect.zipRight(
            writeFileAtomic(fs, path, stateFile(changeId), `${JSON.stringify(encodeState(state), null, 2)}\n`)
          )
        )

      const append = (changeId: ChangeId, record: IterationRecord) =>
        workspace.ensureStateDir(changeId).pipe(
          Effect.zipRight(appendLine(fs, path, historyFile(changeId), JSON.stringify(encodeRecord(record))))
        )

      const recent = (changeId: ChangeId, limit: number) =>
        readTailLines(fs, historyFile(changeId), limit).pipe(Effect.map(decodeLines))

      const openLog = (changeId: ChangeId, run: string, iteration: number) =>
        Effect.gen(function*() {
          const dir = path.join(yield* workspace.ensureStateDir(changeId), "logs")
          const file = path.join(dir, iterationLogName(run, iteration))
          const fail = (cause: { message: string }) => new StateError({ reason: "Write", path: file, detail: cause.message })
          yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError(fail))
          const handle = yield* fs.open(file, { flag: "a", mode: 0o600 }).pipe(Effect.mapError(fail))
          const encoder = new TextEncoder()
          return {
            path: file,
            write: (data: string | Uint8Array) =>
              handle.writeAll(typeof data === "string" ? encoder.encode(data) : data).pipe(Effect.mapError(fail))
          } satisfies IterationLog
        })

      return { readState, writeState, append, recent, openLog }
    })
  )

  /** In memory, for tests of the loop; iteration logs are not kept. */
  static readonly layerMemory = Layer.effect(
    HistoryStore,
    Effect.gen(function*() {
      const states = yield* Ref.make(new Map<string, LoopState>())
      const records = yield* Ref.make(new Map<string, ReadonlyArray<IterationRecord>>())
      return {
        readState: (changeId) => Ref.get(states).pipe(Effect.map((map) => Option.fromNullable(map.get(changeId)))),
        writeState: (changeId, state) => Ref.update(states, (map) => new Map(map).set(changeId, state)),
        append: (changeId, record) =>
          Ref.update(records, (map) => new Map(map).set(changeId, [...(map.get(changeId) ?? []), record])),
        recent: (changeId, limit) =>
          Ref.get(records).pipe(Effect.map((map) => ({ records: (map.get(changeId) ?? []).slice(-limit), skipped: 0 }))),
        openLog: (changeId, run, iteration) =>
          Effect.succeed({ path: `memory:${changeId}/${run}-${iteration}`, write: () => Effect.void })
      }
    })
  )
}

const encodeState = Schema.encodeSync(LoopState)
const encodeRecord = Schema.encodeSync(IterationRecord)
const decodeStateJson = Schema.decodeUnknownEither(Schema.parseJson(LoopState))
const decodeRecordJson = Schema.decodeUnknownEither(Schema.parseJson(IterationRecord))

/** A parse error's message, or a plain one when formatting it fails (the formatter recurses into deeply nested values). */
const describeDecodeError = (error: { readonly message: string }) => {
  try {
    return firstLine(error.message)
  } catch {
    return "it does not have the shape of a state file"
  }
}

const decodeState = (text: string, file: string) =>
  Effect.mapError(
    decodeStateJson(text),
    (error) => new StateError({ reason: "Decode", path: file, detail: describeDecodeError(error) })
  )

const firstLine = (text: string) => text.split("\n").slice(0, 3).join(" ").slice(0, 300)

const decodeLines = (lines: ReadonlyArray<string>): HistoryTail => {
  const records: Array<IterationRecord> = []
  let skipped = 0
  for (const line of lines) {
    const decoded = decodeRecordJson(line)
    if (decoded._tag === "Right") records.push(decoded.right)
    else skipped++
  }
  return { records, skipped }
}

const BLOCK = 64 * 1024

/** The last `limit` lines of a file that are not blank (spaces, tabs and carriage returns only), read backwards block by block so a long history costs no more than a short one. */
const readTailLines = (fs: FileSystem.FileSystem, file: string, limit: number) =>
  Effect.scoped(
    Effect.gen(function*() {
      if (limit <= 0) return []
      // Stryker disable next-line ObjectLiteral: with no flag the file is opened for reading all the same
      const handle = yield* fs.open(file, { flag: "r" })
      const size = Number((yield* handle.stat).size)
      const decoder = new TextDecoder()
      let position = size
      let buffer = new Uint8Array(0)
      // Lines with content only: blank lines (a hand edit, a crash) must not use up the limit.
      // Counting fewer lines than there are only reads more blocks (speed): the result is the same.
      const countLines = () => {
        let n = 0
        let content = false
        // Stryker disable next-line BlockStatement: counting fewer lines only reads more blocks (speed)
        for (const byte of buffer) {
          // Stryker disable next-line ConditionalExpression,BlockStatement: counting fewer lines only reads more blocks (speed)
          if (byte === 10) {
            // Stryker disable next-line UpdateOperator: counting fewer lines only reads more blocks (speed)
            if (content) n++
            content = false
            // Stryker disable next-line BlockStatement: counting fewer lines only reads more blocks (speed)
          } else if (byte !== 32 && byte !== 9 && byte !== 13) {
            // Stryker disable next-line BooleanLiteral: counting fewer lines only reads more blocks (speed)
            content = true
          }
        }
        return n
      }
      while (position > 0 && countLines() <= limit) {
        const length = Math.min(BLOCK, position)
        position -= length
        const chunk = new Uint8Array(length)
        yield* handle.seek(FileSystem.Size(position), "start")
        yield* handle.read(chunk)
        const merged = new Uint8Array(chunk.length + buffer.length)
        merged.set(chunk)
        merged.set(buffer, chunk.length)
        buffer = merged
      }
      const lines = decoder.decode(buffer).split("\n").filter((line) => /[^ \t\r]/.test(line))
      // When the read stopped mid-file, the first line may be partial: drop it unless it is all we need.
      const complete = position > 0 ? lines.slice(1) : lines
      return complete.slice(-limit)
    })
  ).pipe(
    Effect.catchIf(
      (error) => error._tag === "SystemError" && error.reason === "NotFound",
      () => Effect.succeed([] as ReadonlyArray<string>)
    ),
    Effect.mapError((cause) => new StateError({ reason: "Read", path: file, detail: cause.message }))
  )
