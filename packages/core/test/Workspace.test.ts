import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ChangeId } from "../src/domain/Domain.js"
import { LoopLock } from "../src/state/LoopLock.js"
import { Workspace } from "../src/state/Workspace.js"

const tree = (files: Record<string, string>) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "spool-ws-")))
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), content)
  }
  return root
}

const standard = () =>
  tree({
    ".spool/changes/002-01_add-ralph-loop/proposal.md": "# loop\n",
    ".spool/changes/002-02_add-status/proposal.md": "# status\n",
    ".spool/changes/003-01_no-module/proposal.md": "# x\n",
    ".spool/changes/004-01_draft/notes.md": "no proposal yet\n",
    ".spool/changes/archive/001-01_old/proposal.md": "# old\n",
    ".spool/changes/.hidden/proposal.md": "# hidden\n",
    ".spool/modules/002_ralph/module.md": "# ralph module\n",
    "src/deep/dir/file.ts": ""
  })

const withWorkspace = <A, E>(cwd: string, f: (ws: Workspace["Type"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(Workspace, f).pipe(Effect.provide(Workspace.layer(cwd)), Effect.provide(NodeContext.layer))

const resolveError = (cwd: string, input: string) =>
  Effect.flip(withWorkspace(cwd, (ws) => ws.resolveChange(input))).pipe(
    Effect.flatMap((error) => (error._tag === "ChangeError" ? Effect.succeed(error) : Effect.die(error)))
  )

describe("Workspace: finding .spool/ and resolving changes", () => {
  it.effect("resolves an exact change id with its proposal and its module inferred from the id", () =>
    Effect.gen(function*() {
      const root = standard()
      const change = yield* withWorkspace(root, (ws) => ws.resolveChange("002-01_add-ralph-loop"))
      assert.strictEqual(change.id, "002-01_add-ralph-loop")
      assert.strictEqual(change.moduleId, "002")
      assert.strictEqual(change.proposalPath, path.join(root, ".spool/changes/002-01_add-ralph-loop/proposal.md"))
      assert.strictEqual(change.modulePath, path.join(root, ".spool/modules/002_ralph/module.md"))
    }))

  it.effect("finds .spool/ from a nested directory, as git finds .git", () =>
    Effect.gen(function*() {
      const root = standard()
      const found = yield* withWorkspace(path.join(root, "src/deep/dir"), (ws) => Effect.succeed(ws.root))
      assert.strictEqual(found, root)
    }))

  it.effect("fails with WorkspaceNotFoundError outside any .spool/ tree", () =>
    Effect.gen(function*() {
      const outside = tree({ "a.txt": "" })
      const exit = yield* Effect.exit(withWorkspace(outside, (ws) => Effect.succeed(ws.root)))
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(exit), "WorkspaceNotFoundError")
    }))

  it.effect("resolves a unique prefix", () =>
    Effect.gen(function*() {
      const change = yield* withWorkspace(standard(), (ws) => ws.resolveChange("002-01"))
      assert.strictEqual(change.id, "002-01_add-ralph-loop")
    }))

  it.effect("rejects an ambiguous prefix, listing the matches", () =>
    Effect.gen(function*() {
      const error = yield* resolveError(standard(), "002-0")
      assert.strictEqual(error.reason, "Ambiguous")
      assert.deepStrictEqual(error.candidates, ["002-01_add-ralph-loop", "002-02_add-status"])
      assert.include(error.message, "002-01_add-ralph-loop, 002-02_add-status")
    }))

  it.effect("rejects an unknown change, listing the active ones", () =>
    Effect.gen(function*() {
      const error = yield* resolveError(standard(), "009-01")
      assert.strictEqual(error.reason, "NotFound")
      assert.deepStrictEqual(error.candidates, ["002-01_add-ralph-loop", "002-02_add-status", "003-01_no-module"])
    }))

  it.effect("rejects a change without proposal.md", () =>
    Effect.gen(function*() {
      const error = yield* resolveError(standard(), "004-01_draft")
      assert.strictEqual(error.reason, "MissingProposal")
    }))

  it.effect("rejects ids that could leave .spool/changes/", () =>
    Effect.gen(function*() {
      for (const input of ["../x", "a/b", "a\\b", "..", "002..01", "/etc", "", " "]) {
        const error = yield* resolveError(standard(), input)
        assert.strictEqual(error.reason, "InvalidId", input)
      }
    }))

  it.effect("never resolves archived or hidden changes", () =>
    Effect.gen(function*() {
      const archived = yield* resolveError(standard(), "archive")
      assert.strictEqual(archived.reason, "NotFound")
      const hidden = yield* resolveError(standard(), ".hidden")
      assert.strictEqual(hidden.reason, "InvalidId")
    }))

  it.effect("has no module path when the module directory is missing", () =>
    Effect.gen(function*() {
      const change = yield* withWorkspace(standard(), (ws) => ws.resolveChange("003-01"))
      assert.strictEqual(change.moduleId, "003")
      assert.isNull(change.modulePath)
    }))

  it.effect("lists active changes sorted, without archive/, dot-directories or changes lacking a proposal", () =>
    Effect.gen(function*() {
      const active = yield* withWorkspace(standard(), (ws) => ws.activeChanges)
      assert.deepStrictEqual<ReadonlyArray<string>>(active, ["002-01_add-ralph-loop", "002-02_add-status", "003-01_no-module"])
    }))

  it.effect("lists every change directory sorted, without archive/ or dot-directories, saying which has a proposal", () =>
    Effect.gen(function*() {
      const dirs = yield* withWorkspace(standard(), (ws) => ws.changeDirectories)
      assert.deepStrictEqual(dirs.map((dir) => [dir.id, dir.hasProposal]), [
        ["002-01_add-ralph-loop", true],
        ["002-02_add-status", true],
        ["003-01_no-module", true],
        ["004-01_draft", false]
      ])
    }))

  it.effect("creates the state directory with a .gitignore that keeps state out of commits", () =>
    Effect.gen(function*() {
      const root = standard()
      const dir = yield* withWorkspace(root, (ws) => ws.ensureStateDir(ChangeId.make("002-01_add-ralph-loop")))
      assert.strictEqual(dir, path.join(root, ".spool/.state/ralph/002-01_add-ralph-loop"))
      assert.isTrue(fs.statSync(dir).isDirectory())
      assert.include(fs.readFileSync(path.join(root, ".spool/.state/.gitignore"), "utf8"), "\n*\n")
    }))

  it.effect("makes the state directory again, with its .gitignore, when it is removed while spool runs: the next loop's lock is taken there", () =>
    Effect.gen(function*() {
      const root = standard()
      const changeId = ChangeId.make("002-01_add-ralph-loop")
      const who = { pid: process.pid, host: "here", isAlive: () => false }
      // One workspace for the whole test, as one spool process (a sweep) has: a loop ran, its state went, the next loop starts.
      const held = yield* Effect.gen(function*() {
        const workspace = yield* Workspace
        yield* workspace.ensureStateDir(changeId)
        fs.rmSync(path.join(root, ".spool/.state"), { recursive: true })
        const lock = yield* LoopLock
        return yield* Effect.scoped(Effect.zipRight(lock.acquire(changeId), Effect.sync(() => fs.existsSync(path.join(workspace.stateDir(changeId), "lock")))))
      }).pipe(Effect.provide(LoopLock.layer(who).pipe(Layer.provideMerge(Workspace.layer(root)), Layer.provideMerge(NodeContext.layer))))
      assert.isTrue(held)
      assert.include(fs.readFileSync(path.join(root, ".spool/.state/.gitignore"), "utf8"), "\n*\n")
    }))

  it.effect("makes the work directory again, with its .gitignore, when it is removed while spool runs", () =>
    Effect.gen(function*() {
      const root = standard()
      const dir = yield* withWorkspace(root, (ws) =>
        Effect.gen(function*() {
          yield* ws.ensureWorkDir
          fs.rmSync(path.join(root, ".spool/.state"), { recursive: true })
          return yield* ws.ensureWorkDir
        }))
      assert.strictEqual(dir, path.join(root, ".spool/.state"))
      assert.include(fs.readFileSync(path.join(dir, ".gitignore"), "utf8"), "\n*\n")
    }))
})
