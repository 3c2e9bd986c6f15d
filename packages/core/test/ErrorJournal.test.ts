import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ChangeId } from "../src/domain/Domain.js"
import { ErrorJournal } from "../src/state/ErrorJournal.js"
import { formatEntry } from "../src/state/JournalEntry.js"
import { Workspace } from "../src/state/Workspace.js"
import { sampleEntry } from "./journalFixture.js"

const workspace = () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "spool-journal-")))
  fs.mkdirSync(path.join(root, ".spool", "changes", "001-01_a"), { recursive: true })
  fs.writeFileSync(path.join(root, ".spool", "changes", "001-01_a", "proposal.md"), "# 001-01_a\n")
  return root
}

const entry = (iteration: number) => sampleEntry({ iteration })

const onDisk = <A, E>(root: string, body: Effect.Effect<A, E, ErrorJournal>) =>
  body.pipe(
    Effect.provide(ErrorJournal.layer.pipe(Layer.provide(Workspace.layer(root)))),
    Effect.provide(NodeContext.layer)
  )

const id = ChangeId.make("001-01_a")

describe("ErrorJournal", () => {
  it.effect("keeps the journal as errors.md in the change's state directory, entries appended in order", () =>
    Effect.gen(function*() {
      const root = workspace()
      const file = path.join(root, ".spool", ".state", "ralph", "001-01_a", "errors.md")
      const seen = yield* onDisk(
        root,
        Effect.gen(function*() {
          const journal = yield* ErrorJournal
          const before = yield* journal.read(id)
          yield* journal.append(id, entry(1))
          yield* journal.append(id, entry(2))
          return { path: journal.path(id), before, after: yield* journal.read(id) }
        })
      )
      assert.strictEqual(seen.path, file)
      assert.deepStrictEqual(seen.before, [])
      assert.deepStrictEqual(seen.after.map((e) => e.iteration), [1, 2])
      assert.strictEqual(fs.readFileSync(file, "utf8"), formatEntry(entry(1)) + formatEntry(entry(2)))
    }))

  it.effect("archives a journal with entries beside it and leaves an empty one only its owner can read", () =>
    Effect.gen(function*() {
      const root = workspace()
      const dir = path.join(root, ".spool", ".state", "ralph", "001-01_a")
      const seen = yield* onDisk(
        root,
        Effect.gen(function*() {
          const journal = yield* ErrorJournal
          yield* journal.append(id, entry(1))
          const archived = yield* journal.archive(id, "20261122T030000Z")
          return { archived, after: yield* journal.read(id) }
        })
      )
      assert.strictEqual(seen.archived, path.join(dir, "errors-20261122T030000Z.md"))
      assert.strictEqual(fs.readFileSync(path.join(dir, "errors-20261122T030000Z.md"), "utf8"), formatEntry(entry(1)))
      assert.strictEqual(fs.readFileSync(path.join(dir, "errors.md"), "utf8"), "")
      assert.strictEqual(fs.statSync(path.join(dir, "errors.md")).mode & 0o777, 0o600)
      assert.deepStrictEqual(seen.after, [])
    }))

  it.effect("archives nothing when the journal is missing, empty or blank", () =>
    Effect.gen(function*() {
      const root = workspace()
      const dir = path.join(root, ".spool", ".state", "ralph", "001-01_a")
      const archive = onDisk(root, Effect.flatMap(ErrorJournal, (journal) => journal.archive(id, "s")))
      assert.isNull(yield* archive)
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(path.join(dir, "errors.md"), "")
      assert.isNull(yield* archive)
      fs.writeFileSync(path.join(dir, "errors.md"), " \n\n")
      assert.isNull(yield* archive)
      assert.deepStrictEqual(fs.readdirSync(dir), ["errors.md"])
      assert.strictEqual(fs.readFileSync(path.join(dir, "errors.md"), "utf8"), " \n\n")
    }))

  it.effect("in memory: appends, reads, and archives only a journal with entries", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        const journal = yield* ErrorJournal
        const emptyArchive = yield* journal.archive(id, "s1")
        yield* journal.append(id, entry(1))
        const before = yield* journal.read(id)
        const archived = yield* journal.archive(id, "s2")
        return { path: journal.path(id), emptyArchive, before, archived, after: yield* journal.read(id) }
      }).pipe(Effect.provide(ErrorJournal.layerMemory))
      assert.strictEqual(seen.path, "memory:001-01_a/errors.md")
      assert.isNull(seen.emptyArchive)
      assert.deepStrictEqual(seen.before.map((e) => e.iteration), [1])
      assert.strictEqual(seen.archived, "memory:001-01_a/errors-s2.md")
      assert.deepStrictEqual(seen.after, [])
    }))
})
