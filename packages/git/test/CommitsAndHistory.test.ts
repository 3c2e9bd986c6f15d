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
  gitCommitting,
  head,
  isolateGitEnvironment,
  read,
  removeTemporaryDirectories,
  repository,
  temporaryDirectory,
  write
} from "./fixtures.js"

beforeAll(isolateGitEnvironment)
afterAll(removeTemporaryDirectories)

const inRepository = <A, E>(dir: string, body: Effect.Effect<A, E, GitSummary>) =>
  body.pipe(Effect.provide(GitSummaryLive.layer(dir)))

const trackedFiles = (dir: string) => git(dir, "ls-tree", "-r", "--name-only", "-z", "HEAD").split("\0").filter(Boolean)

const installHook = (dir: string, name: string, script: string) => {
  const hook = Path.join(dir, ".git", "hooks", name)
  Fs.mkdirSync(Path.dirname(hook), { recursive: true })
  Fs.writeFileSync(hook, `#!/bin/sh\n${script}\n`, { mode: 0o755 })
}

describe("GitSummaryLive auto-commit", () => {
  it.effect("records the hash of the commit it made", () => {
    const dir = repository()
    return inRepository(dir, Effect.gen(function*() {
      write(dir, "feature.ts", "export const x = 1\n")
      write(dir, "README.md", "changed\n")
      const hash = yield* (yield* GitSummary).commitAll("spool: 001_x iteration 1")
      assert.strictEqual(hash, head(dir))
      assert.strictEqual(git(dir, "log", "-1", "--format=%s").trim(), "spool: 001_x iteration 1")
      assert.strictEqual(git(dir, "status", "--porcelain"), "")
    }))
  })

  it.effect("makes no commit when nothing changed", () => {
    const dir = repository()
    const before = head(dir)
    return inRepository(dir, Effect.gen(function*() {
      assert.strictEqual(yield* (yield* GitSummary).commitAll("nothing"), null)
      assert.strictEqual(head(dir), before)
    }))
  })

  it.effect("never commits .spool/.state, even without its .gitignore", () => {
    const dir = repository({ "README.md": "hello\n", ".spool/.state/force-added.json": "{}\n" })
    return inRepository(dir, Effect.gen(function*() {
      write(dir, ".spool/.state/001_x/state.json", "{}\n")
      write(dir, ".spool/.state/force-added.json", "{\"changed\":true}\n")
      assert.strictEqual(yield* (yield* GitSummary).commitAll("only state"), null)
      write(dir, ".spool/changes/001_x/tasks.md", "- [x] a\n")
      const hash = yield* (yield* GitSummary).commitAll("tasks")
      assert.strictEqual(hash, head(dir))
      assert.deepStrictEqual(trackedFiles(dir).sort(), [
        ".spool/.state/force-added.json",
        ".spool/changes/001_x/tasks.md",
        "README.md"
      ])
      assert.strictEqual(git(dir, "show", "HEAD:.spool/.state/force-added.json"), "{}\n")
    }))
  })

  it.effect("makes the first commit on an unborn branch", () => {
    const dir = emptyRepository()
    return inRepository(dir, Effect.gen(function*() {
      const summary = yield* GitSummary
      assert.deepStrictEqual(yield* summary.recentCommits({ count: 10, includeMerges: false }), [])
      assert.strictEqual(yield* summary.commitAll("empty"), null)
      write(dir, "first file.txt", "1\n")
      const hash = yield* summary.commitAll("first")
      assert.strictEqual(hash, head(dir))
      assert.deepStrictEqual(trackedFiles(dir), ["first file.txt"])
    }))
  })

  it.effect("fails with a GitError when a pre-commit hook rejects the commit, leaving the repository intact", () => {
    const dir = repository()
    const before = head(dir)
    installHook(dir, "pre-commit", "echo 'lint failed: fix src/x.ts' >&2\nexit 1")
    return inRepository(dir, Effect.gen(function*() {
      write(dir, "src/x.ts", "bad\n")
      const error = yield* Effect.flip((yield* GitSummary).commitAll("rejected"))
      assert.instanceOf(error, GitError)
      assert.strictEqual(error.operation, "commit")
      assert.include(error.detail, "lint failed: fix src/x.ts")
      assert.strictEqual(head(dir), before)
      assert.strictEqual(read(dir, "src/x.ts"), "bad\n")
    }))
  })

  it.effect("treats a hook that rejects without a word as a failed commit", () => {
    const dir = repository()
    const before = head(dir)
    installHook(dir, "pre-commit", "exit 1")
    return inRepository(dir, Effect.gen(function*() {
      write(dir, "x.txt", "x\n")
      const error = yield* Effect.flip((yield* GitSummary).commitAll("rejected"))
      assert.instanceOf(error, GitError)
      assert.strictEqual(error.operation, "commit")
      assert.strictEqual(head(dir), before)
    }))
  })

  it.effect("fails with a GitError naming the fix when no identity is configured", () => {
    const dir = temporaryDirectory()
    git(dir, "init", "-q", "-b", "main")
    // Without this git may invent an identity from the host name.
    git(dir, "config", "user.useConfigOnly", "true")
    return inRepository(dir, Effect.gen(function*() {
      write(dir, "a.txt", "a\n")
      const error = yield* Effect.flip((yield* GitSummary).commitAll("anonymous"))
      assert.strictEqual(error.operation, "commit")
      assert.include(error.message, "git config user.email")
    }))
  })
})

describe("GitSummaryLive history", () => {
  const withHistory = () => {
    const dir = repository({ "a.txt": "a\n" })
    for (let i = 1; i <= 3; i++) {
      write(dir, "a.txt", `a${i}\n`)
      commit(dir, `change ${i}`)
    }
    git(dir, "checkout", "-q", "-b", "topic")
    write(dir, "topic.txt", "t\n")
    commit(dir, "topic work")
    git(dir, "checkout", "-q", "main")
    gitCommitting(dir, "merge", "-q", "--no-ff", "-m", "Merge topic", "topic")
    write(dir, "a.txt", "last\n")
    commit(dir, "subject with\ttab, | pipes, \"quotes\" and ünïcode")
    return dir
  }

  it.effect("lists the last N commits newest first with short hash, subject, author and ISO date", () => {
    const dir = withHistory()
    return inRepository(dir, Effect.gen(function*() {
      const commits = yield* (yield* GitSummary).recentCommits({ count: 3, includeMerges: false })
      assert.deepStrictEqual(commits.map((c) => c.subject), [
        "subject with\ttab, | pipes, \"quotes\" and ünïcode",
        "topic work",
        "change 3"
      ])
      assert.strictEqual(commits[0]?.hash, git(dir, "rev-parse", "--short", "HEAD").trim())
      assert.strictEqual(commits[0]?.author, "Spool Test")
      assert.match(commits[0]?.date ?? "", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}([+-]\d{2}:\d{2}|Z)$/)
    }))
  })

  it.effect("excludes merge commits unless asked for them", () => {
    const dir = withHistory()
    return inRepository(dir, Effect.gen(function*() {
      const summary = yield* GitSummary
      const without = yield* summary.recentCommits({ count: 10, includeMerges: false })
      const withMerges = yield* summary.recentCommits({ count: 10, includeMerges: true })
      assert.notInclude(without.map((c) => c.subject), "Merge topic")
      assert.strictEqual(without.length, 6)
      assert.deepStrictEqual(withMerges.slice(0, 2).map((c) => c.subject), [
        "subject with\ttab, | pipes, \"quotes\" and ünïcode",
        "Merge topic"
      ])
      assert.strictEqual(withMerges.length, 7)
    }))
  })
})

describe("GitSummaryLive outside a repository and in a linked worktree", () => {
  it.effect("behaves like layerNone outside a git work tree", () => {
    const dir = temporaryDirectory()
    write(dir, "file.txt", "x\n")
    return inRepository(dir, Effect.gen(function*() {
      const summary = yield* GitSummary
      assert.isFalse(summary.repository)
      const before = yield* summary.snapshot
      assert.isNull(before)
      write(dir, "file.txt", "y\n")
      assert.isNull(yield* summary.changesSince(before))
      assert.isNull(yield* summary.commitAll("never"))
      assert.deepStrictEqual(yield* summary.recentCommits({ count: 10, includeMerges: true }), [])
      assert.isFalse(Fs.existsSync(Path.join(dir, ".git")))
    }))
  })

  it.effect("treats a directory that does not exist as outside a repository", () =>
    inRepository(
      Path.join(temporaryDirectory(), "missing"),
      Effect.map(GitSummary, (summary) => assert.isFalse(summary.repository))
    ))

  it.effect("summarises and commits in a linked worktree without touching the main one", () => {
    const main = repository({ "a.txt": "a\n" })
    const linked = Path.join(temporaryDirectory(), "linked tree")
    git(main, "worktree", "add", "-q", "-b", "agent", linked)
    write(linked, "a.txt", "dirty before\n")
    const mainHead = head(main)
    const mainIndex = Fs.readFileSync(Path.join(main, ".git", "index"))
    return inRepository(linked, Effect.gen(function*() {
      const summary = yield* GitSummary
      assert.isTrue(summary.repository)
      const before = yield* summary.snapshot
      write(linked, "b.txt", "b\n")
      commit(linked, "agent commit")
      write(linked, "c.txt", "c\n")
      const changes = yield* summary.changesSince(before)
      assert.deepStrictEqual(changes?.summary.files, ["b.txt", "c.txt"])
      const hash = yield* summary.commitAll("auto")
      assert.strictEqual(hash, head(linked))
      assert.strictEqual(git(main, "rev-parse", "agent").trim(), hash)
      assert.strictEqual(head(main), mainHead)
      assert.deepStrictEqual(Fs.readFileSync(Path.join(main, ".git", "index")), mainIndex)
      const commits = yield* summary.recentCommits({ count: 2, includeMerges: false })
      assert.deepStrictEqual(commits.map((c) => c.subject), ["auto", "agent commit"])
    }))
  })
})
