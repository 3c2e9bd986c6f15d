import { assert, describe, it } from "@effect/vitest"
import { Worktrees } from "@spool/core"
import { Effect, Either } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { parseWorktreeList } from "../src/GitOutput.js"
import { GitWorktree } from "../src/index.js"
import { commit, emptyRepository, git, isolateGitEnvironment, removeTemporaryDirectories, repository, temporaryDirectory, write } from "./fixtures.js"

beforeAll(isolateGitEnvironment)
afterAll(removeTemporaryDirectories)

const change = "001-01_greeting"
const proposal = `.spool/changes/${change}/proposal.md`

/** A repository with a committed change and the state directory's ignore file, as spool writes it. */
const spoolRepository = () => {
  const dir = repository({ "README.md": "hello\n", [proposal]: "# Greeting\n" })
  write(dir, ".spool/.state/.gitignore", "*\n")
  return dir
}

const open = (root: string, requires: ReadonlyArray<string> = [proposal]) => GitWorktree.open({ root, changeId: change, requires })

const failure = <A>(effect: Effect.Effect<A, unknown>) =>
  Effect.map(Effect.either(effect), (result) => {
    assert.isTrue(Either.isLeft(result), "expected a failure")
    return (result as Either.Left<{ _tag: string; reason: string; message: string }, A>).left
  })

const branches = (dir: string) => git(dir, "branch", "--format=%(refname:short)").trim().split("\n")

describe("GitWorktree.open", () => {
  it.effect("makes a worktree on spool/<change-id> from HEAD under .spool/.state/worktrees/, unseen by git status", () =>
    Effect.gen(function*() {
      const root = spoolRepository()
      const worktree = yield* open(root)
      assert.strictEqual(worktree.path, Path.join(root, ".spool", ".state", "worktrees", change))
      assert.strictEqual(worktree.root, worktree.path)
      assert.strictEqual(worktree.branch, `spool/${change}`)
      assert.isTrue(worktree.created)
      assert.strictEqual(git(worktree.path, "rev-parse", "--abbrev-ref", "HEAD").trim(), `spool/${change}`)
      assert.strictEqual(git(worktree.path, "rev-parse", "HEAD"), git(root, "rev-parse", "HEAD"))
      assert.strictEqual(Fs.readFileSync(Path.join(worktree.path, proposal), "utf8"), "# Greeting\n")
      assert.strictEqual(git(root, "status", "--porcelain", "--untracked-files=all"), "")
    }))

  it.effect("reuses the worktree of an earlier run, with the commits made in it", () =>
    Effect.gen(function*() {
      const root = spoolRepository()
      const first = yield* open(root)
      write(first.path, "work.txt", "done\n")
      commit(first.path, "work")
      const tip = git(first.path, "rev-parse", "HEAD")
      const again = yield* open(root)
      assert.isFalse(again.created)
      assert.strictEqual(again.path, first.path)
      assert.strictEqual(git(again.path, "rev-parse", "HEAD"), tip)
      assert.notStrictEqual(git(root, "rev-parse", "HEAD"), tip)
    }))

  it.effect("finds .spool/ in a subdirectory of the repository inside the worktree", () =>
    Effect.gen(function*() {
      const top = repository({ [`project/${proposal}`]: "# Greeting\n" })
      write(top, "project/.spool/.state/.gitignore", "*\n")
      const root = Path.join(top, "project")
      const worktree = yield* open(root)
      assert.strictEqual(worktree.root, Path.join(worktree.path, "project"))
      assert.isTrue(Fs.existsSync(Path.join(worktree.root, proposal)))
    }))

  it.effect("refuses a directory outside a git repository", () =>
    Effect.gen(function*() {
      const root = temporaryDirectory()
      const error = yield* failure(open(root))
      assert.strictEqual(error.reason, "NotARepository")
      assert.include(error.message, `${root} is not inside one`)
    }))

  it.effect("refuses a repository without a commit", () =>
    Effect.gen(function*() {
      const root = emptyRepository()
      write(root, ".spool/.state/.gitignore", "*\n")
      assert.strictEqual((yield* failure(open(root, []))).reason, "NoCommit")
    }))

  it.effect("refuses a change that is not committed, and makes neither branch nor directory", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, proposal, "# Greeting\n")
      write(root, ".spool/.state/.gitignore", "*\n")
      const error = yield* failure(open(root))
      assert.strictEqual(error.reason, "NotCommitted")
      assert.include(error.message, `${proposal} is not committed in HEAD`)
      assert.include(error.message, "commit the change first")
      assert.deepStrictEqual(branches(root), ["main"])
      assert.isFalse(Fs.existsSync(GitWorktree.directoryOf(root, change)))
    }))

  it.effect("refuses a branch spool/<change-id> checked out in another worktree", () =>
    Effect.gen(function*() {
      const root = spoolRepository()
      const elsewhere = Path.join(temporaryDirectory(), "elsewhere")
      git(root, "worktree", "add", "-q", "-b", `spool/${change}`, elsewhere)
      const error = yield* failure(open(root))
      assert.strictEqual(error.reason, "CheckedOutElsewhere")
      assert.include(error.message, `branch spool/${change} is checked out in another worktree, ${elsewhere}`)
    }))

  it.effect("refuses a worktree directory deleted by hand, pointing at git worktree prune; afterwards the branch comes back with its commits", () =>
    Effect.gen(function*() {
      const root = spoolRepository()
      const first = yield* open(root)
      write(first.path, "work.txt", "done\n")
      commit(first.path, "work")
      const tip = git(first.path, "rev-parse", "HEAD")
      Fs.rmSync(first.path, { recursive: true, force: true })
      const error = yield* failure(open(root))
      assert.strictEqual(error.reason, "Missing")
      assert.include(error.message, "run git worktree prune")
      git(root, "worktree", "prune")
      const again = yield* open(root)
      assert.isTrue(again.created)
      assert.strictEqual(git(again.path, "rev-parse", "HEAD"), tip)
    }))

  it.effect("refuses a directory in the way that is not a worktree", () =>
    Effect.gen(function*() {
      const root = spoolRepository()
      write(root, `.spool/.state/worktrees/${change}/notes.txt`, "mine\n")
      const error = yield* failure(open(root))
      assert.strictEqual(error.reason, "Occupied")
      assert.strictEqual(Fs.readFileSync(Path.join(GitWorktree.directoryOf(root, change), "notes.txt"), "utf8"), "mine\n")
    }))

  it.effect("refuses a location git status would show", () =>
    Effect.gen(function*() {
      const root = repository({ [proposal]: "# Greeting\n" })
      assert.strictEqual((yield* failure(open(root))).reason, "NotIgnored")
    }))
})

describe("GitWorktree.remove", () => {
  it.effect("removes a clean worktree and keeps its branch", () =>
    Effect.gen(function*() {
      const root = spoolRepository()
      const worktree = yield* open(root)
      write(worktree.path, "work.txt", "done\n")
      commit(worktree.path, "work")
      yield* GitWorktree.remove({ root, changeId: change })
      assert.isFalse(Fs.existsSync(worktree.path))
      assert.deepStrictEqual(branches(root).sort(), ["main", `spool/${change}`])
      assert.strictEqual(git(root, "show", `spool/${change}:work.txt`), "done\n")
    }))

  it.effect("refuses a worktree with uncommitted work and leaves it as it was", () =>
    Effect.gen(function*() {
      const root = spoolRepository()
      const worktree = yield* open(root)
      write(worktree.path, "draft.txt", "unsaved\n")
      const error = yield* failure(GitWorktree.remove({ root, changeId: change }))
      assert.strictEqual(error.reason, "Uncommitted")
      assert.include(error.message, "holds uncommitted work (1 file)")
      assert.strictEqual(Fs.readFileSync(Path.join(worktree.path, "draft.txt"), "utf8"), "unsaved\n")
    }))

  it.effect("says when there is no worktree to remove", () =>
    Effect.gen(function*() {
      const root = spoolRepository()
      assert.strictEqual((yield* failure(GitWorktree.remove({ root, changeId: change }))).reason, "NotFound")
    }))
})

describe("parseWorktreeList", () => {
  it("reads paths, branches, detached heads and prunable entries", () => {
    const output = [
      "worktree /repo",
      "HEAD 1111111111111111111111111111111111111111",
      "branch refs/heads/main",
      "",
      "worktree /repo/.spool/.state/worktrees/a b",
      "HEAD 2222222222222222222222222222222222222222",
      "detached",
      "",
      "worktree /gone",
      "HEAD 3333333333333333333333333333333333333333",
      "branch refs/heads/spool/x",
      "prunable gitdir file points to non-existent location",
      ""
    ].join("\n")
    assert.deepStrictEqual(parseWorktreeList(output), [
      { path: "/repo", branch: "refs/heads/main", prunable: false },
      { path: "/repo/.spool/.state/worktrees/a b", branch: null, prunable: false },
      { path: "/gone", branch: "refs/heads/spool/x", prunable: true }
    ])
  })
})

describe("GitWorktree.layer", () => {
  it.effect("opens the worktrees of several changes asked for at once, each on its own branch", () =>
    Effect.gen(function*() {
      const changes = ["001-01_a", "001-02_b", "001-03_c", "001-04_d"]
      const files = Object.fromEntries(changes.map((id) => [`.spool/changes/${id}/proposal.md`, `# ${id}\n`]))
      const root = repository({ "README.md": "hello\n", ...files })
      write(root, ".spool/.state/.gitignore", "*\n")
      const worktrees = yield* Worktrees
      const opened = yield* Effect.forEach(
        changes,
        (changeId) => worktrees.open({ root, changeId, requires: [`.spool/changes/${changeId}/proposal.md`] }),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(opened.map((worktree) => worktree.branch), changes.map((id) => `spool/${id}`))
      for (const worktree of opened) {
        assert.strictEqual(git(worktree.path, "rev-parse", "--abbrev-ref", "HEAD").trim(), worktree.branch)
      }
      const listed = parseWorktreeList(git(root, "worktree", "list", "--porcelain")).map((entry) => entry.branch)
      for (const id of changes) assert.include(listed, `refs/heads/spool/${id}`)
      yield* Effect.forEach(changes, (changeId) => worktrees.remove({ root, changeId }), { concurrency: "unbounded" })
      assert.strictEqual(parseWorktreeList(git(root, "worktree", "list", "--porcelain")).length, 1)
    }).pipe(Effect.provide(GitWorktree.layer)))
})
