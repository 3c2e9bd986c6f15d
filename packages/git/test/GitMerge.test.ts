import { assert, describe, it } from "@effect/vitest"
import { Merges, type MergeResult } from "@spool/core"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { GitWorktree } from "../src/index.js"
import { commit, git, head, isolateGitEnvironment, read, removeTemporaryDirectories, repository, write } from "./fixtures.js"

beforeAll(isolateGitEnvironment)
afterAll(removeTemporaryDirectories)

/** A repository on `main` whose change branches each commit one file on top of the first commit. */
const withBranches = (branches: Record<string, Record<string, string>>) => {
  const root = repository({ "README.md": "hello\n", "src/app.ts": "export const app = 1\n" })
  write(root, ".spool/.state/.gitignore", "*\n")
  for (const [branch, files] of Object.entries(branches)) {
    git(root, "checkout", "-q", "-b", branch, "main")
    for (const [file, content] of Object.entries(files)) write(root, file, content)
    commit(root, `work on ${branch}`)
  }
  git(root, "checkout", "-q", "main")
  return root
}

const passing = () => Effect.succeed(null)

const merge = (root: string, branch: string, check: (cwd: string) => Effect.Effect<string | null> = passing) =>
  Effect.flatMap(Merges, (merges) => merges.merge({ root, branch, base: "main", check }))

/** No merge left behind: no scratch worktree, no merge in progress in the person's work tree. */
const leftClean = (root: string) => {
  assert.strictEqual(git(root, "worktree", "list", "--porcelain").split("\n\n").filter((b) => b.trim() !== "").length, 1)
  assert.isFalse(Fs.existsSync(Path.join(root, ".git", "MERGE_HEAD")))
  assert.strictEqual(git(root, "status", "--porcelain"), "")
}

describe("Merges (git)", () => {
  it.effect("merges a branch into the checked-out base, after its checks pass on the merged tree, and moves the work tree with it", () =>
    Effect.gen(function*() {
      const root = withBranches({ "spool/a": { "a.txt": "a\n" } })
      const checkedIn: Array<string> = []
      const result = yield* merge(root, "spool/a", (cwd) =>
        Effect.sync(() => {
          checkedIn.push(read(cwd, "a.txt"))
          return null
        }))
      assert.strictEqual(result._tag, "Merged")
      const merged = result as Extract<MergeResult, { _tag: "Merged" }>
      assert.strictEqual(merged.workTree, "moved")
      assert.deepStrictEqual(checkedIn, ["a\n"])
      assert.strictEqual(head(root), merged.commit)
      assert.strictEqual(read(root, "a.txt"), "a\n")
      leftClean(root)
    }).pipe(Effect.provide(GitWorktree.layer)))

  it.effect("puts each merge on top of the ones before", () =>
    Effect.gen(function*() {
      const root = withBranches({ "spool/a": { "a.txt": "a\n" }, "spool/b": { "b.txt": "b\n" } })
      const first = yield* merge(root, "spool/a")
      const second = yield* merge(root, "spool/b")
      assert.strictEqual(first._tag, "Merged")
      assert.strictEqual(second._tag, "Merged")
      assert.strictEqual(read(root, "a.txt"), "a\n")
      assert.strictEqual(read(root, "b.txt"), "b\n")
      // The second merge is a merge commit whose first parent is the first merge.
      assert.strictEqual(git(root, "rev-parse", "HEAD^1").trim(), (first as { commit: string }).commit)
      leftClean(root)
    }).pipe(Effect.provide(GitWorktree.layer)))

  it.effect("leaves a conflicting branch unmerged, naming the files, with the base and the work tree untouched", () =>
    Effect.gen(function*() {
      const root = withBranches({ "spool/a": { "src/app.ts": "export const app = 2\n" } })
      write(root, "src/app.ts", "export const app = 3\n")
      commit(root, "meanwhile on main")
      const before = head(root)
      const result = yield* merge(root, "spool/a")
      assert.deepStrictEqual(result, { _tag: "Conflict", paths: ["src/app.ts"] })
      assert.strictEqual(head(root), before)
      assert.strictEqual(read(root, "src/app.ts"), "export const app = 3\n")
      leftClean(root)
    }).pipe(Effect.provide(GitWorktree.layer)))

  it.effect("leaves the base alone when the checks fail on the merged tree", () =>
    Effect.gen(function*() {
      const root = withBranches({ "spool/a": { "a.txt": "a\n" } })
      const before = head(root)
      const result = yield* merge(root, "spool/a", () => Effect.succeed("pnpm test"))
      assert.deepStrictEqual(result, { _tag: "ChecksFailed", check: "pnpm test" })
      assert.strictEqual(head(root), before)
      assert.isFalse(Fs.existsSync(Path.join(root, "a.txt")))
      leftClean(root)
    }).pipe(Effect.provide(GitWorktree.layer)))

  it.effect("does not move a base checked out in a work tree with uncommitted changes, and leaves them as they are", () =>
    Effect.gen(function*() {
      const root = withBranches({ "spool/a": { "a.txt": "a\n" } })
      write(root, "README.md", "mine, not committed\n")
      const before = head(root)
      const result = yield* merge(root, "spool/a")
      assert.deepStrictEqual(result, { _tag: "WorkTreeDirty", path: root })
      assert.strictEqual(head(root), before)
      assert.strictEqual(read(root, "README.md"), "mine, not committed\n")
      assert.strictEqual(git(root, "status", "--porcelain").trim(), "M README.md")
    }).pipe(Effect.provide(GitWorktree.layer)))

  it.effect("moves a base that no work tree has checked out by its ref alone", () =>
    Effect.gen(function*() {
      const root = withBranches({ "spool/a": { "a.txt": "a\n" } })
      git(root, "checkout", "-q", "-b", "elsewhere")
      const result = yield* merge(root, "spool/a")
      assert.strictEqual(result._tag, "Merged")
      assert.strictEqual((result as { workTree: string }).workTree, "none")
      assert.strictEqual(git(root, "rev-parse", "main").trim(), (result as { commit: string }).commit)
      assert.strictEqual(git(root, "rev-parse", "--abbrev-ref", "HEAD").trim(), "elsewhere")
      assert.isFalse(Fs.existsSync(Path.join(root, "a.txt")))
    }).pipe(Effect.provide(GitWorktree.layer)))

  it.effect("does not move a base that moved while the checks ran", () =>
    Effect.gen(function*() {
      const root = withBranches({ "spool/a": { "a.txt": "a\n" } })
      const result = yield* merge(root, "spool/a", () =>
        Effect.sync(() => {
          write(root, "late.txt", "late\n")
          commit(root, "committed while the checks ran")
          return null
        }))
      assert.deepStrictEqual(result, { _tag: "BaseMoved" })
      assert.strictEqual(git(root, "log", "-1", "--format=%s").trim(), "committed while the checks ran")
      assert.isFalse(Fs.existsSync(Path.join(root, "a.txt")))
      leftClean(root)
    }).pipe(Effect.provide(GitWorktree.layer)))

  it.effect("says a branch already in the base is merged already, and changes nothing", () =>
    Effect.gen(function*() {
      const root = withBranches({ "spool/a": { "a.txt": "a\n" } })
      git(root, "merge", "-q", "--ff-only", "spool/a")
      const before = head(root)
      assert.deepStrictEqual(yield* merge(root, "spool/a"), { _tag: "AlreadyMerged" })
      assert.strictEqual(head(root), before)
    }).pipe(Effect.provide(GitWorktree.layer)))
})
