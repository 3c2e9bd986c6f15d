import { assert, describe, it } from "@effect/vitest"
import { GitError, GitSummary } from "@spool/core"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { GitSummaryLive } from "../src/index.js"
import {
  commit,
  emptyRepository,
  git,
  isolateGitEnvironment,
  remove,
  removeTemporaryDirectories,
  repository,
  temporaryDirectory,
  write
} from "./fixtures.js"

beforeAll(isolateGitEnvironment)
afterAll(removeTemporaryDirectories)

/** Snapshots `dir`, lets `agent` act like a harness iteration, and returns what changed. */
const iteration = (dir: string, agent: () => void) =>
  Effect.gen(function*() {
    const summary = yield* GitSummary
    const before = yield* summary.snapshot
    agent()
    return (yield* summary.changesSince(before))?.summary ?? null
  }).pipe(Effect.provide(GitSummaryLive.layer(dir)))

const sorted = (files: ReadonlyArray<string> | undefined) => [...(files ?? [])].sort()

describe("GitSummaryLive change summary", () => {
  it.effect("counts files the agent committed itself during the iteration", () =>
    Effect.gen(function*() {
      const dir = repository({ "a.txt": "one\n" })
      const changes = yield* iteration(dir, () => {
        write(dir, "a.txt", "one\ntwo\n")
        write(dir, "b.txt", "new\n")
        commit(dir, "agent work")
      })
      assert.deepStrictEqual(changes, { changedFiles: 2, files: ["a.txt", "b.txt"], insertions: 2, deletions: 0 })
    }))

  it.effect("does not count files that were dirty before the iteration and left alone", () =>
    Effect.gen(function*() {
      const dir = repository({ "dirty.txt": "old\n", "other.txt": "x\n" })
      write(dir, "dirty.txt", "dirty before\n")
      write(dir, "untracked-before.txt", "already here\n")
      git(dir, "add", "dirty.txt")
      const changes = yield* iteration(dir, () => write(dir, "other.txt", "y\n"))
      assert.deepStrictEqual(changes, { changedFiles: 1, files: ["other.txt"], insertions: 1, deletions: 1 })
    }))

  it.effect("counts a file that was dirty before and modified again", () =>
    Effect.gen(function*() {
      const dir = repository({ "dirty.txt": "old\n" })
      write(dir, "dirty.txt", "dirty before\n")
      const changes = yield* iteration(dir, () => write(dir, "dirty.txt", "dirty before\nand more\n"))
      assert.deepStrictEqual(changes, { changedFiles: 1, files: ["dirty.txt"], insertions: 1, deletions: 0 })
    }))

  it.effect("reports nothing when the iteration changed nothing", () =>
    Effect.gen(function*() {
      const dir = repository()
      write(dir, "README.md", "dirty\n")
      const changes = yield* iteration(dir, () => undefined)
      assert.deepStrictEqual(changes, { changedFiles: 0, files: [], insertions: 0, deletions: 0 })
    }))

  it.effect("counts untracked and deleted files with their lines", () =>
    Effect.gen(function*() {
      const dir = repository({ "gone.txt": "1\n2\n3\n", "keep.txt": "k\n" })
      const changes = yield* iteration(dir, () => {
        remove(dir, "gone.txt")
        write(dir, "src/new.ts", "export {}\n")
      })
      assert.deepStrictEqual(changes, {
        changedFiles: 2,
        files: ["gone.txt", "src/new.ts"],
        insertions: 1,
        deletions: 3
      })
    }))

  it.effect("counts a rename as one changed file under its new path", () =>
    Effect.gen(function*() {
      const content = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join("")
      const dir = repository({ "old name.txt": content })
      const changes = yield* iteration(dir, () => Fs.renameSync(Path.join(dir, "old name.txt"), Path.join(dir, "new name.txt")))
      assert.deepStrictEqual(changes, { changedFiles: 1, files: ["new name.txt"], insertions: 0, deletions: 0 })
    }))

  it.effect("counts binary files as changed files without lines", () =>
    Effect.gen(function*() {
      const dir = repository({ "notes.txt": "a\n" })
      const changes = yield* iteration(dir, () => {
        write(dir, "image.bin", new Uint8Array([0, 1, 2, 0, 255, 254, 0, 10]))
        write(dir, "notes.txt", "a\nb\n")
      })
      assert.deepStrictEqual(changes, { changedFiles: 2, files: ["image.bin", "notes.txt"], insertions: 1, deletions: 0 })
    }))

  it.effect("reports paths with spaces, non-ASCII characters and newlines verbatim", () =>
    Effect.gen(function*() {
      const dir = repository()
      const odd = ["dir with space/file name.txt", "naïve-日本語.md", "line\nbreak.txt", "tab\there.txt", "\"quoted\".txt"]
      const changes = yield* iteration(dir, () => odd.forEach((file) => write(dir, file, "x\n")))
      assert.strictEqual(changes?.changedFiles, odd.length)
      assert.deepStrictEqual(sorted(changes?.files), [...odd].sort())
      assert.strictEqual(changes?.insertions, odd.length)
    }))

  it.effect("lists at most 200 paths but keeps the true count", () =>
    Effect.gen(function*() {
      const dir = repository()
      const changes = yield* iteration(dir, () => {
        for (let i = 0; i < 205; i++) write(dir, `many/f${i}.txt`, `${i}\n`)
      })
      assert.strictEqual(changes?.changedFiles, 205)
      assert.strictEqual(changes?.files.length, 200)
      assert.strictEqual(changes?.insertions, 205)
    }))

  it.effect("never counts files under .spool/.state, even without its .gitignore", () =>
    Effect.gen(function*() {
      const dir = repository({
        ".spool/changes/001_x/proposal.md": "# x\n",
        ".spool/.state/force-added.json": "{}\n"
      })
      const changes = yield* iteration(dir, () => {
        write(dir, ".spool/.state/001_x/state.json", "{}\n")
        write(dir, ".spool/.state/001_x/history.jsonl", "{}\n")
        write(dir, ".spool/.state/force-added.json", "{\"changed\":true}\n")
        commit(dir, "agent commits everything, state included")
        write(dir, ".spool/changes/001_x/tasks.md", "- [ ] a\n")
      })
      assert.deepStrictEqual(changes?.files, [".spool/changes/001_x/tasks.md"])
    }))

  it.effect("leaves the real index as it was and removes its temporary index", () =>
    Effect.gen(function*() {
      const dir = repository({ "a.txt": "a\n", "b.txt": "b\n" })
      write(dir, "a.txt", "staged\n")
      git(dir, "add", "a.txt")
      write(dir, "b.txt", "unstaged\n")
      const indexBefore = Fs.readFileSync(Path.join(dir, ".git", "index"))
      const statusBefore = git(dir, "status", "--porcelain")
      const tmp = temporaryDirectory("spool-git-tmpdir-")
      const previousTmpdir = process.env.TMPDIR
      process.env.TMPDIR = tmp
      const changes = yield* iteration(dir, () => write(dir, "c.txt", "c\n")).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (previousTmpdir === undefined) delete process.env.TMPDIR
          else process.env.TMPDIR = previousTmpdir
        }))
      )
      assert.strictEqual(changes?.changedFiles, 1)
      assert.deepStrictEqual(Fs.readFileSync(Path.join(dir, ".git", "index")), indexBefore)
      assert.strictEqual(git(dir, "status", "--porcelain"), statusBefore + "?? c.txt\n")
      assert.deepStrictEqual(Fs.readdirSync(tmp), [])
    }))

  it.effect("sees an edit made in the same clock tick as the last git add", () => {
    const dir = repository()
    // Without ctime checks only git's racy-entry rule (entry not older than the index file) forces a re-read.
    git(dir, "config", "core.trustctime", "false")
    // The last millisecond of a second: the copied index must stay in the edit's second, not move past it.
    const tick = new Date("2020-01-01T00:00:00.999Z")
    write(dir, "same.txt", "hello\n")
    Fs.utimesSync(Path.join(dir, "same.txt"), tick, tick)
    git(dir, "add", "same.txt")
    Fs.utimesSync(Path.join(dir, ".git", "index"), tick, tick)
    write(dir, "same.txt", "dirty\n")
    Fs.utimesSync(Path.join(dir, "same.txt"), tick, tick)
    return Effect.gen(function*() {
      const snapshot = yield* (yield* GitSummary).snapshot
      assert.strictEqual(
        git(dir, "rev-parse", `${snapshot?.tree}:same.txt`).trim(),
        git(dir, "hash-object", "same.txt").trim()
      )
    }).pipe(Effect.provide(GitSummaryLive.layer(dir)))
  })

  it.effect("works on an unborn branch", () => {
    const dir = emptyRepository()
    return Effect.gen(function*() {
      write(dir, "before.txt", "b\n")
      const summary = yield* GitSummary
      const before = yield* summary.snapshot
      assert.isNotNull(before)
      write(dir, "after.txt", "a\n")
      const changes = yield* summary.changesSince(before)
      assert.deepStrictEqual(changes?.summary, { changedFiles: 1, files: ["after.txt"], insertions: 1, deletions: 0 })
    }).pipe(Effect.provide(GitSummaryLive.layer(dir)))
  })

  it.effect("hands back its closing snapshot, from which the next iteration counts only what came after", () => {
    const dir = repository({ "a.txt": "a\n" })
    return Effect.gen(function*() {
      const summary = yield* GitSummary
      const first = yield* summary.changesSince(yield* summary.snapshot)
      assert.strictEqual(first?.summary.changedFiles, 0)
      write(dir, "b.txt", "b\n")
      const second = yield* summary.changesSince(first!.after)
      assert.deepStrictEqual(second?.summary.files, ["b.txt"])
      write(dir, "c.txt", "c\n")
      const third = yield* summary.changesSince(second!.after)
      assert.deepStrictEqual(third?.summary.files, ["c.txt"])
    }).pipe(Effect.provide(GitSummaryLive.layer(dir)))
  })

  it.effect("fails with a GitError naming the temporary directory it could not make, and the operation it was for", () => {
    const dir = repository()
    const missing = Path.join(temporaryDirectory("spool-git-tmpdir-"), "missing")
    const previousTmpdir = process.env.TMPDIR
    process.env.TMPDIR = missing
    return Effect.gen(function*() {
      const summary = yield* GitSummary
      const error = yield* Effect.flip(summary.snapshot)
      assert.instanceOf(error, GitError)
      assert.strictEqual(
        // The last six characters of the name are random.
        error.message.replace(/.{6}'$/, "XXXXXX'"),
        `git snapshot failed: could not create a temporary index directory: ENOENT: no such file or directory, mkdtemp '${missing}/spool-git-XXXXXX'`
      )
      // A commit of no paths needs no index; a commit of some fails as the commit it was.
      assert.isNull(yield* summary.commit("nothing", []))
      write(dir, "README.md", "edited\n")
      const commitError = yield* Effect.flip(summary.commit("auto", ["README.md"]))
      assert.strictEqual(
        commitError.message.replace(/.{6}'$/, "XXXXXX'"),
        `git commit failed: could not create a temporary index directory: ENOENT: no such file or directory, mkdtemp '${missing}/spool-git-XXXXXX'`
      )
    }).pipe(
      Effect.provide(GitSummaryLive.layer(dir)),
      Effect.ensuring(Effect.sync(() => {
        if (previousTmpdir === undefined) delete process.env.TMPDIR
        else process.env.TMPDIR = previousTmpdir
      }))
    )
  })

  it.effect("fails with a GitError naming the index when it cannot be read", () => {
    const dir = repository()
    const index = Path.join(dir, ".git", "index")
    Fs.rmSync(index)
    Fs.symlinkSync("index", index)
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* GitSummary).snapshot)
      assert.strictEqual(error.operation, "snapshot")
      assert.strictEqual(
        error.detail,
        `could not copy the index ${index}: ELOOP: too many symbolic links encountered, stat '${index}'`
      )
    }).pipe(Effect.provide(GitSummaryLive.layer(dir)))
  })

  it.effect("fails with git's words when the index is corrupt", () => {
    const dir = repository()
    Fs.writeFileSync(Path.join(dir, ".git", "index"), "garbage")
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* GitSummary).snapshot)
      assert.strictEqual(error.operation, "snapshot")
      assert.match(error.detail, /^`git add` exited with code 128: fatal: .*index file smaller than expected$/)
    }).pipe(Effect.provide(GitSummaryLive.layer(dir)))
  })

  it.effect("fails with git's words when a file the index holds unchanged has lost its content", () => {
    const dir = emptyRepository()
    write(dir, "a.txt", "a\n")
    // Old enough that git trusts the index's record of it and does not read it again.
    Fs.utimesSync(Path.join(dir, "a.txt"), new Date("2020-01-01T00:00:00Z"), new Date("2020-01-01T00:00:00Z"))
    commit(dir, "initial")
    const blob = git(dir, "rev-parse", "HEAD:a.txt").trim()
    Fs.rmSync(Path.join(dir, ".git", "objects", blob.slice(0, 2), blob.slice(2)))
    write(dir, "b.txt", "b\n")
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* GitSummary).snapshot)
      assert.strictEqual(error.operation, "snapshot")
      assert.strictEqual(
        error.detail,
        `\`git write-tree\` exited with code 128: error: invalid object 100644 ${blob} for 'a.txt' / fatal: git-write-tree: error building trees`
      )
    }).pipe(Effect.provide(GitSummaryLive.layer(dir)))
  })

  it.effect("fails with a GitError when the snapshot to count from is not in the repository", () => {
    const dir = repository()
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* GitSummary).changesSince({ tree: "1".repeat(40) }))
      assert.strictEqual(error.operation, "diff")
      assert.match(error.detail, /^`git diff-tree` exited with code 128: fatal: /)
    }).pipe(Effect.provide(GitSummaryLive.layer(dir)))
  })
})
