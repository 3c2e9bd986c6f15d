import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ContextStore } from "../src/state/ContextStore.js"
import { ChangeId, type LoopState } from "../src/domain/Domain.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { Workspace } from "../src/state/Workspace.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"

const changeId = ChangeId.make("001-01_x")

const setup = () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "spool-history-"))
  fs.mkdirSync(path.join(root, ".spool/changes/001-01_x"), { recursive: true })
  const layer = Layer.mergeAll(HistoryStore.layer, ContextStore.layer).pipe(
    Layer.provideMerge(Workspace.layer(root)),
    Layer.provideMerge(NodeContext.layer)
  )
  return { root, dir: path.join(root, ".spool/.state/ralph/001-01_x"), layer }
}

const record = (iteration: number) => iterationRecord({ iteration })

const state: LoopState = {
  changeId: "001-01_x",
  run: "r1",
  status: "running",
  iteration: 2,
  minIterations: 1,
  maxIterations: 5,
  startedAt: "2026-11-22T00:00:00.000Z",
  updatedAt: "2026-11-22T00:00:01.000Z",
  pid: 1,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  guards: null
}

describe("HistoryStore and ContextStore on disk", () => {
  it.effect("appends records and reads back the last N in order, however long the history", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      // A long history written in one go (appending 3,000 records one by one only measures the disk),
      // then the newest records through the store.
      yield* store.append(changeId, record(1))
      const lines = Array.from({ length: 2994 }, (_, i) => JSON.stringify(record(i + 2))).join("\n")
      fs.appendFileSync(path.join(dir, "history.jsonl"), `${lines}\n`)
      for (let i = 2996; i <= 3000; i++) yield* store.append(changeId, record(i))
      const tail = yield* store.recent(changeId, 5)
      assert.deepStrictEqual(tail.records.map((r) => r.iteration), [2996, 2997, 2998, 2999, 3000])
      assert.strictEqual(tail.skipped, 0)
      // None asked, none given (slice(-0) would have been the whole block read).
      assert.deepStrictEqual(yield* store.recent(changeId, 0), { records: [], skipped: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("skips a history line cut short by a crash, and counts it", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.append(changeId, record(1))
      fs.appendFileSync(path.join(dir, "history.jsonl"), "{\"run\":\"r1\",\"itera")
      fs.appendFileSync(path.join(dir, "history.jsonl"), "\n")
      yield* store.append(changeId, record(2))
      const tail = yield* store.recent(changeId, 10)
      assert.deepStrictEqual(tail.records.map((r) => r.iteration), [1, 2])
      assert.strictEqual(tail.skipped, 1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("has no history and no state for a change that never ran", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      assert.deepStrictEqual(yield* store.recent(changeId, 10), { records: [], skipped: 0 })
      assert.isTrue(Option.isNone(yield* store.readState(changeId)))
    }).pipe(Effect.provide(layer))
  })

  it.effect("writes the state file atomically and reads it back", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.writeState(changeId, state)
      yield* store.writeState(changeId, { ...state, iteration: 3 })
      assert.deepStrictEqual(Option.getOrNull(yield* store.readState(changeId))?.iteration, 3)
      assert.deepStrictEqual(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp")), [])
    }).pipe(Effect.provide(layer))
  })

  it.effect("keeps what became of a merge in the state file, and reads a state file written before it was kept", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      const merge = { merged: false, text: "not merged: conflict in shared.txt" }
      yield* store.writeState(changeId, { ...state, status: "complete", merge })
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8")).merge, merge)
      assert.deepStrictEqual(Option.getOrNull(yield* store.readState(changeId))?.merge, merge)
      // A state file of an earlier spool: no merge field, and none read.
      const { merge: _merge, ...older } = JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8"))
      fs.writeFileSync(path.join(dir, "state.json"), JSON.stringify(older))
      const read = Option.getOrThrow(yield* store.readState(changeId))
      assert.strictEqual(read.status, "complete")
      assert.isFalse("merge" in read)
      // A merge field that is not one is the state file's damage, named as such.
      fs.writeFileSync(path.join(dir, "state.json"), JSON.stringify({ ...older, merge: { merged: "no" } }))
      assert.strictEqual((yield* Effect.flip(store.readState(changeId))).reason, "Decode")
    }).pipe(Effect.provide(layer))
  })

  it.effect("names the file when the state file is damaged", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(path.join(dir, "state.json"), "{\"changeId\": \"001-01_x\", \"run\":")
      const error = yield* Effect.flip((yield* HistoryStore).readState(changeId))
      assert.strictEqual(error.reason, "Decode")
      assert.include(error.message, path.join(dir, "state.json"))
      assert.notInclude(error.message, "\n")
    }).pipe(Effect.provide(layer))
  })

  it.effect("does not let blank lines use up the limit, wherever the blocks read backwards begin", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.append(changeId, record(1))
      const file = path.join(dir, "history.jsonl")
      // The last 64 KiB block holds records 2 and 3 and lines of spaces, tabs and carriage returns;
      // the first time, it begins just after a line feed, the second time on one.
      const end = `\t\n\r\n\r\n\r\n \t\r\n${JSON.stringify(record(3))}\n`
      const block = (head: string) => {
        const fixed = `${head}${JSON.stringify(record(2))}\n\n`.length + end.length
        return `${head}${JSON.stringify(record(2))}\n${" ".repeat(64 * 1024 - fixed)}\n${end}`
      }
      fs.appendFileSync(file, block(""))
      assert.strictEqual(fs.statSync(file).size - 64 * 1024, JSON.stringify(record(1)).length + 1)
      assert.deepStrictEqual(yield* store.recent(changeId, 2), { records: [record(2), record(3)], skipped: 0 })
      fs.writeFileSync(file, `${JSON.stringify(record(1))}${block("\n")}`)
      assert.strictEqual(fs.statSync(file).size - 64 * 1024, JSON.stringify(record(1)).length)
      assert.deepStrictEqual(yield* store.recent(changeId, 2), { records: [record(2), record(3)], skipped: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("counts a line of other white space (a form feed, a no-break space) as one it could not read", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.append(changeId, record(1))
      fs.appendFileSync(path.join(dir, "history.jsonl"), "\f\n \u00a0 \n")
      yield* store.append(changeId, record(2))
      assert.deepStrictEqual(yield* store.recent(changeId, 10), { records: [record(1), record(2)], skipped: 2 })
      assert.deepStrictEqual(yield* store.recent(changeId, 2), { records: [record(2)], skipped: 1 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("fails naming the history file when it cannot be read", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      fs.mkdirSync(path.join(dir, "history.jsonl"), { recursive: true })
      const error = yield* Effect.flip((yield* HistoryStore).recent(changeId, 10))
      assert.strictEqual(error.reason, "Read")
      assert.strictEqual(error.path, path.join(dir, "history.jsonl"))
      assert.strictEqual(error.message, `cannot read ${path.join(dir, "history.jsonl")}: ${error.detail}`)
      assert.include(error.detail, "EISDIR")
    }).pipe(Effect.provide(layer))
  })

  it.effect("says which part of a damaged state file is wrong, on one line", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      fs.mkdirSync(dir, { recursive: true })
      const file = path.join(dir, "state.json")
      fs.writeFileSync(file, "{\"changeId\": \"001-01_x\", \"run\":")
      const error = yield* Effect.flip((yield* HistoryStore).readState(changeId))
      assert.strictEqual(
        error.message,
        `${file} is damaged: (parseJson <-> (Struct (Encoded side) <-> Struct (Type side))) └─ Encoded side transformation failure    └─ parseJson (fix or delete the file)`
      )
      // Nested too deep for the parse error to be described: a plain message instead of a crash.
      fs.writeFileSync(file, `{"changeId": ${"[".repeat(50_000)}${"]".repeat(50_000)}}`)
      const deep = yield* Effect.flip((yield* HistoryStore).readState(changeId))
      assert.strictEqual(deep.message, `${file} is damaged: it does not have the shape of a state file (fix or delete the file)`)
    }).pipe(Effect.provide(layer))
  })

  it.effect("writes each iteration's full log to its own private file under logs/, appending", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      const first = yield* store.openLog(changeId, "r1", 7)
      assert.strictEqual(first.path, path.join(dir, "logs", "r1-007.log"))
      yield* first.write("text ")
      yield* first.write(new Uint8Array([0xe2, 0x9c, 0x93, 0x0a]))
      const again = yield* store.openLog(changeId, "r1", 7)
      yield* again.write("more\n")
      const second = yield* store.openLog(changeId, "r2", 1234)
      yield* second.write("other\n")
      assert.deepStrictEqual(fs.readdirSync(path.join(dir, "logs")).sort(), ["r1-007.log", "r2-1234.log"])
      assert.strictEqual(fs.readFileSync(first.path, "utf8"), "text ✓\nmore\n")
      assert.strictEqual(fs.readFileSync(second.path, "utf8"), "other\n")
      assert.strictEqual(fs.statSync(first.path).mode & 0o777, 0o600)
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.effect("fails naming the log file when its folder cannot be made", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(path.join(dir, "logs"), "")
      const error = yield* Effect.flip((yield* HistoryStore).openLog(changeId, "r1", 1))
      assert.strictEqual(error.reason, "Write")
      assert.strictEqual(error.path, path.join(dir, "logs", "r1-001.log"))
      assert.include(error.detail, "EEXIST")
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.effect("in memory, keeps the last N records of each change and names each log", () => {
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      for (let i = 1; i <= 4; i++) yield* store.append(changeId, record(i))
      yield* store.append(ChangeId.make("002-01_y"), record(9))
      assert.deepStrictEqual(yield* store.recent(changeId, 2), { records: [record(3), record(4)], skipped: 0 })
      assert.deepStrictEqual(yield* store.recent(ChangeId.make("003-01_z"), 2), { records: [], skipped: 0 })
      assert.strictEqual((yield* store.openLog(changeId, "r1", 3)).path, "memory:001-01_x/r1-3")
    }).pipe(Effect.scoped, Effect.provide(HistoryStore.layerMemory))
  })

  it.effect("appends to, reads and clears the context file", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const contexts = yield* ContextStore
      assert.strictEqual(yield* contexts.load(changeId), "")
      yield* contexts.append(changeId, "first")
      yield* contexts.append(changeId, "  second  ")
      assert.strictEqual(yield* contexts.load(changeId), "first\nsecond")
      assert.strictEqual(fs.readFileSync(path.join(dir, "context.txt"), "utf8"), "first\nsecond\n")
      yield* contexts.clear(changeId)
      assert.strictEqual(yield* contexts.load(changeId), "")
    }).pipe(Effect.provide(layer))
  })
})
