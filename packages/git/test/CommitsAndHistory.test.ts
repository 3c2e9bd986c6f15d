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

/** An iteration as the loop runs it: a snapshot, the agent's `work`, what changed, and a commit of exactly that. */
const iterate = (message: string, work: () => void) =>
  Effect.gen(function*() {
    const summary = yield* GitSummary
    const before = yield* summary.snapshot
    work()
    const changes = yield* summary.changesSince(before)
    return { changes, hash: yield* summary.commit(message, changes?.paths ?? []) }
  })

const committedFiles = (dir: string, rev = "HEAD") =>
  git(dir, "show", "--name-only", "--no-renames", "--format=", "-z", rev).split("\0").filter(Boolean).sort()

describe("GitSummaryLive auto-commit", () => {
  it.effect("records the hash of the commit it made", () => {
    const dir = repository()
    return inRepository(dir, Effect.gen(function*() {
      const { hash } = yield* iterate("spool: 001_x iteration 1", () => {
        write(dir, "feature.ts", "export const x = 1\n")
        write(dir, "README.md", "changed\n")
      })
      assert.strictEqual(hash, head(dir))
      assert.strictEqual(git(dir, "log", "-1", "--format=%s").trim(), "spool: 001_x iteration 1")
      assert.strictEqual(git(dir, "status", "--porcelain"), "")
    }))
  })

  it.effect("makes no commit when nothing changed", () => {
    const dir = repository()
    const before = head(dir)
    return inRepository(dir, Effect.gen(function*() {
      assert.strictEqual((yield* iterate("nothing", () => undefined)).hash, null)
      assert.strictEqual(yield* (yield* GitSummary).commit("no paths", []), null)
      assert.strictEqual(head(dir), before)
    }))
  })

  it.effect("commits only the iteration's paths: the owner's edits, untracked files and staged changes stay as they were", () => {
    const dir = repository({ "README.md": "hello\n", "src/old.ts": "old\n", "gone.txt": "bye\n", "staged.txt": "s\n" })
    write(dir, "README.md", "hello\nthe owner's unfinished sentence\n")
    write(dir, "private-notes.txt", "API_KEY=do-not-commit\n")
    write(dir, "staged.txt", "staged by the owner\n")
    git(dir, "add", "staged.txt")
    return inRepository(dir, Effect.gen(function*() {
      const { changes, hash } = yield* iterate("iteration 1", () => {
        write(dir, "src/new file [1].ts", "new\n")
        git(dir, "mv", "src/old.ts", "src/renamed.ts")
        Fs.rmSync(Path.join(dir, "gone.txt"))
      })
      assert.strictEqual(hash, head(dir))
      assert.deepStrictEqual(committedFiles(dir), ["gone.txt", "src/new file [1].ts", "src/old.ts", "src/renamed.ts"])
      assert.deepStrictEqual(changes?.summary.files.slice().sort(), ["gone.txt", "src/new file [1].ts", "src/renamed.ts"])
      assert.strictEqual(
        git(dir, "status", "--porcelain").split("\n").filter(Boolean).sort().join("\n"),
        [" M README.md", "?? private-notes.txt", "M  staged.txt"].join("\n")
      )
      assert.strictEqual(read(dir, "README.md"), "hello\nthe owner's unfinished sentence\n")
    }))
  })

  it.effect("commits from a .spool/ in a subdirectory of the repository, paths anywhere in the work tree", () => {
    const dir = repository({ "README.md": "hello\n", "pkg/.spool/changes/001_x/proposal.md": "# x\n" })
    write(dir, "pkg/owner.txt", "the owner's\n")
    return Effect.gen(function*() {
      const summary = yield* GitSummary
      const before = yield* summary.snapshot
      assert.deepStrictEqual(yield* summary.dirtyPaths(before!), ["pkg/owner.txt"])
      write(dir, "pkg/src.txt", "new\n")
      write(dir, "README.md", "hello\nedited\n")
      const changes = yield* summary.changesSince(before)
      const hash = yield* summary.commit("iteration 1", changes!.paths)
      assert.strictEqual(hash, head(dir))
      assert.deepStrictEqual(committedFiles(dir), ["README.md", "pkg/src.txt"])
      assert.strictEqual(git(dir, "status", "--porcelain"), "?? pkg/owner.txt\n")
    }).pipe(Effect.provide(GitSummaryLive.layer(Path.join(dir, "pkg"))))
  })

  it.effect("leaves the real index as committed when a pre-commit hook reformats a file", () => {
    const dir = repository()
    installHook(dir, "pre-commit", "echo formatted > x.txt && git add x.txt")
    return inRepository(dir, Effect.gen(function*() {
      const { hash } = yield* iterate("iteration 1", () => write(dir, "x.txt", "raw\n"))
      assert.strictEqual(hash, head(dir))
      assert.strictEqual(git(dir, "show", "HEAD:x.txt"), "formatted\n")
      assert.strictEqual(git(dir, "status", "--porcelain"), "")
    }))
  })

  it.effect("commits a file that became a directory, and a directory that became a file", () => {
    const dir = repository({ "a": "a file\n", "d/x.txt": "x\n" })
    return inRepository(dir, Effect.gen(function*() {
      const { hash } = yield* iterate("iteration 1", () => {
        Fs.rmSync(Path.join(dir, "a"))
        write(dir, "a/b.txt", "b\n")
        Fs.rmSync(Path.join(dir, "d"), { recursive: true })
        write(dir, "d", "now a file\n")
      })
      assert.strictEqual(hash, head(dir))
      assert.deepStrictEqual(trackedFiles(dir).sort(), ["a/b.txt", "d"])
      assert.strictEqual(git(dir, "status", "--porcelain"), "")
    }))
  })

  it.effect("commits a file the owner had edited whole when the agent edits it too", () => {
    const dir = repository({ "README.md": "hello\n" })
    write(dir, "README.md", "hello\nowner\n")
    return inRepository(dir, Effect.gen(function*() {
      const { hash } = yield* iterate("iteration 1", () => write(dir, "README.md", "hello\nowner\nagent\n"))
      assert.strictEqual(hash, head(dir))
      assert.strictEqual(git(dir, "show", "HEAD:README.md"), "hello\nowner\nagent\n")
      assert.strictEqual(git(dir, "status", "--porcelain"), "")
    }))
  })

  it.effect("names the paths that differ from the last commit at a snapshot", () => {
    const dir = repository({ "README.md": "hello\n", "a.txt": "a\n" })
    write(dir, "README.md", "edited\n")
    write(dir, "untracked.txt", "u\n")
    write(dir, ".spool/.state/ralph/x/state.json", "{}\n")
    Fs.rmSync(Path.join(dir, "a.txt"))
    return inRepository(dir, Effect.gen(function*() {
      const summary = yield* GitSummary
      const at = yield* summary.snapshot
      assert.deepStrictEqual((yield* summary.dirtyPaths(at!)).slice().sort(), ["README.md", "a.txt", "untracked.txt"])
    }))
  })

  it.effect("fails with a GitError when the snapshot is not in the repository", () => {
    const born = repository()
    const unborn = emptyRepository()
    const bogus = { tree: "1".repeat(40) }
    return Effect.gen(function*() {
      for (const dir of [born, unborn]) {
        const error = yield* inRepository(dir, Effect.flip(Effect.flatMap(GitSummary, (summary) => summary.dirtyPaths(bogus))))
        assert.strictEqual(error.operation, "status")
        assert.match(error.detail, /^`git (diff-tree|ls-tree)` exited with code 128: fatal: /)
      }
    })
  })

  it.effect("names the operation that failed when the repository is removed from under it", () => {
    const dir = repository()
    return inRepository(dir, Effect.gen(function*() {
      const summary = yield* GitSummary
      const at = (yield* summary.snapshot)!
      write(dir, "b.txt", "b\n")
      Fs.rmSync(Path.join(dir, ".git"), { recursive: true })
      const failures = [
        yield* Effect.flip(summary.dirtyPaths(at)),
        yield* Effect.flip(summary.commit("auto", ["b.txt"])),
        yield* Effect.flip(summary.recentCommits({ count: 5, includeMerges: false }))
      ]
      assert.deepStrictEqual(failures.map((error) => error.operation), ["status", "commit", "log"])
      // Each asks first (or, for the history, next) which commit HEAD names.
      for (const error of failures) assert.match(error.detail, /^`git rev-parse` exited with code 128: fatal: not a git repository/)
    }))
  })

  it.effect("names every file as uncommitted on an unborn branch", () => {
    const dir = emptyRepository()
    write(dir, "a.txt", "a\n")
    return inRepository(dir, Effect.gen(function*() {
      const summary = yield* GitSummary
      assert.deepStrictEqual(yield* summary.dirtyPaths((yield* summary.snapshot)!), ["a.txt"])
    }))
  })

  it.effect("never commits .spool/.state, even without its .gitignore", () => {
    const dir = repository({ "README.md": "hello\n", ".spool/.state/force-added.json": "{}\n" })
    return inRepository(dir, Effect.gen(function*() {
      const onlyState = yield* iterate("only state", () => {
        write(dir, ".spool/.state/001_x/state.json", "{}\n")
        write(dir, ".spool/.state/force-added.json", "{\"changed\":true}\n")
      })
      assert.strictEqual(onlyState.hash, null)
      const { hash } = yield* iterate("tasks", () => write(dir, ".spool/changes/001_x/tasks.md", "- [x] a\n"))
      assert.strictEqual(hash, head(dir))
      assert.deepStrictEqual(trackedFiles(dir).sort(), [
        ".spool/.state/force-added.json",
        ".spool/changes/001_x/tasks.md",
        "README.md"
      ])
      assert.strictEqual(git(dir, "show", "HEAD:.spool/.state/force-added.json"), "{}\n")
    }))
  })

  it.effect("makes the first commit on an unborn branch, leaving other files out", () => {
    const dir = emptyRepository()
    write(dir, "owner.txt", "not mine\n")
    return inRepository(dir, Effect.gen(function*() {
      const summary = yield* GitSummary
      assert.deepStrictEqual(yield* summary.recentCommits({ count: 10, includeMerges: false }), [])
      assert.strictEqual((yield* iterate("empty", () => undefined)).hash, null)
      const { hash } = yield* iterate("first", () => write(dir, "first file.txt", "1\n"))
      assert.strictEqual(hash, head(dir))
      assert.deepStrictEqual(trackedFiles(dir), ["first file.txt"])
    }))
  })

  it.effect("makes no commit of a path the agent committed itself", () => {
    const dir = repository()
    const before = head(dir)
    return inRepository(dir, Effect.gen(function*() {
      const { changes, hash } = yield* iterate("auto", () => {
        write(dir, "b.txt", "b\n")
        commit(dir, "agent commit")
      })
      assert.deepStrictEqual(changes?.paths, ["b.txt"])
      assert.strictEqual(hash, null)
      assert.strictEqual(git(dir, "rev-parse", "HEAD~1").trim(), before)
    }))
  })

  it.effect("fails with a GitError when a pre-commit hook rejects the commit, leaving the repository intact", () => {
    const dir = repository()
    const before = head(dir)
    installHook(dir, "pre-commit", "echo 'lint failed: fix src/x.ts' >&2\nexit 1")
    return inRepository(dir, Effect.gen(function*() {
      const error = yield* Effect.flip(iterate("rejected", () => write(dir, "src/x.ts", "bad\n")))
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
      const error = yield* Effect.flip(iterate("rejected", () => write(dir, "x.txt", "x\n")))
      assert.instanceOf(error, GitError)
      assert.strictEqual(error.operation, "commit")
      assert.strictEqual(head(dir), before)
    }))
  })

  it.effect("commits the iteration's paths while the real index holds a conflict, which stays", () => {
    const dir = repository({ "a.txt": "base\n" })
    write(dir, "a.txt", "stashed\n")
    git(dir, "stash", "-q")
    write(dir, "a.txt", "committed\n")
    commit(dir, "edit a")
    const before = head(dir)
    // A stash that no longer applies cleanly leaves a.txt unmerged in the real index.
    assert.throws(() => git(dir, "stash", "pop", "-q"))
    assert.strictEqual(git(dir, "diff", "--name-only", "--diff-filter=U"), "a.txt\n")
    return inRepository(dir, Effect.gen(function*() {
      write(dir, "c.txt", "c\n")
      const hash = yield* (yield* GitSummary).commit("auto", ["c.txt"])
      assert.strictEqual(hash, head(dir))
      assert.strictEqual(git(dir, "rev-parse", "HEAD~1").trim(), before)
      assert.deepStrictEqual(committedFiles(dir), ["c.txt"])
      assert.strictEqual(git(dir, "show", "HEAD:a.txt"), "committed\n")
      assert.strictEqual(git(dir, "diff", "--name-only", "--diff-filter=U"), "a.txt\n")
    }))
  })

  it.effect("fails with git's words when the last commit's tree is missing", () => {
    const dir = repository({ "a.txt": "a\n" })
    const tree = git(dir, "rev-parse", "HEAD^{tree}").trim()
    Fs.rmSync(Path.join(dir, ".git", "objects", tree.slice(0, 2), tree.slice(2)))
    write(dir, "a.txt", "b\n")
    return inRepository(dir, Effect.gen(function*() {
      const error = yield* Effect.flip((yield* GitSummary).commit("auto", ["a.txt"]))
      assert.strictEqual(error.operation, "commit")
      assert.match(error.detail, /^`git read-tree` exited with code 128: fatal: /)
    }))
  })

  it.effect("fails with git's words when a required clean filter refuses an iteration's file", () => {
    const dir = repository({ ".gitattributes": "*.dat filter=broken\n" })
    git(dir, "config", "filter.broken.clean", "false")
    git(dir, "config", "filter.broken.required", "true")
    const before = head(dir)
    write(dir, "x.dat", "data\n")
    return inRepository(dir, Effect.gen(function*() {
      const error = yield* Effect.flip((yield* GitSummary).commit("auto", ["x.dat"]))
      assert.strictEqual(error.operation, "commit")
      assert.match(error.detail, /^`git update-index` exited with code 128: .*clean filter 'broken' failed/)
      assert.strictEqual(head(dir), before)
    }))
  })

  it.effect("fails with a GitError when a hook removes the directory it runs from, the commit made", () => {
    const dir = repository({ "README.md": "hello\n", "pkg/.spool/changes/001_x/proposal.md": "# x\n" })
    installHook(dir, "post-commit", "rm -rf pkg")
    write(dir, "b.txt", "b\n")
    return inRepository(Path.join(dir, "pkg"), Effect.gen(function*() {
      const error = yield* Effect.flip((yield* GitSummary).commit("auto", ["b.txt"]))
      assert.strictEqual(error.operation, "commit")
      assert.match(error.detail, /^`git rev-parse` exited with code /)
      assert.strictEqual(git(dir, "log", "-1", "--format=%s").trim(), "auto")
    }))
  })

  it.effect("makes no first commit of paths that are not there", () => {
    const dir = emptyRepository()
    write(dir, "other.txt", "x\n")
    return inRepository(dir, Effect.gen(function*() {
      assert.isNull(yield* (yield* GitSummary).commit("auto", ["gone.txt"]))
      assert.throws(() => git(dir, "rev-parse", "--verify", "-q", "HEAD"))
    }))
  })

  it.effect("fails with a GitError when the real index is locked after the commit, which stays made", () => {
    const dir = repository()
    installHook(dir, "post-commit", "touch .git/index.lock")
    return inRepository(dir, Effect.gen(function*() {
      const error = yield* Effect.flip(iterate("auto", () => write(dir, "b.txt", "b\n")))
      assert.strictEqual(error.operation, "commit")
      assert.match(error.detail, /^`git reset` exited with code 128: fatal: Unable to create '.*index\.lock': File exists\./)
      assert.strictEqual(git(dir, "log", "-1", "--format=%s").trim(), "auto")
    }))
  })

  it.effect("fails with a GitError naming the fix when no identity is configured", () => {
    const dir = temporaryDirectory()
    git(dir, "init", "-q", "-b", "main")
    // Without this git may invent an identity from the host name.
    git(dir, "config", "user.useConfigOnly", "true")
    return inRepository(dir, Effect.gen(function*() {
      const error = yield* Effect.flip(iterate("anonymous", () => write(dir, "a.txt", "a\n")))
      assert.strictEqual(
        error.message,
        "git commit failed: no author identity is configured; set one with `git config user.name \"Your Name\"` and " +
          "`git config user.email you@example.com` in this repository, or globally with --global"
      )
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

  it.effect("lists nothing for a count below one", () => {
    const dir = withHistory()
    return inRepository(dir, Effect.gen(function*() {
      const summary = yield* GitSummary
      assert.deepStrictEqual(yield* summary.recentCommits({ count: -1, includeMerges: true }), [])
      assert.deepStrictEqual(yield* summary.recentCommits({ count: 0.5, includeMerges: true }), [])
    }))
  })

  it.effect("fails with git's words when a commit of the history is missing", () => {
    const dir = withHistory()
    const parent = git(dir, "rev-parse", "HEAD~1").trim()
    Fs.rmSync(Path.join(dir, ".git", "objects", parent.slice(0, 2), parent.slice(2)))
    return inRepository(dir, Effect.gen(function*() {
      const error = yield* Effect.flip((yield* GitSummary).recentCommits({ count: 5, includeMerges: true }))
      assert.strictEqual(error.operation, "log")
      assert.match(error.detail, /^`git log` exited with code 128: /)
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
      assert.isNull(yield* summary.commit("never", ["file.txt"]))
      assert.deepStrictEqual(yield* summary.recentCommits({ count: 10, includeMerges: true }), [])
      assert.isFalse(Fs.existsSync(Path.join(dir, ".git")))
    }))
  })

  it.effect("treats a .git directory and a bare repository as outside a work tree", () => {
    const dir = repository()
    const bare = temporaryDirectory()
    git(bare, "init", "-q", "--bare")
    return Effect.gen(function*() {
      for (const where of [Path.join(dir, ".git"), bare]) {
        assert.isFalse(yield* inRepository(where, Effect.map(GitSummary, (summary) => summary.repository)))
      }
    })
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
      const hash = yield* summary.commit("auto", changes!.paths)
      assert.strictEqual(hash, head(linked))
      assert.strictEqual(git(main, "rev-parse", "agent").trim(), hash)
      assert.strictEqual(head(main), mainHead)
      assert.deepStrictEqual(Fs.readFileSync(Path.join(main, ".git", "index")), mainIndex)
      const commits = yield* summary.recentCommits({ count: 2, includeMerges: false })
      assert.deepStrictEqual(commits.map((c) => c.subject), ["auto", "agent commit"])
    }))
  })
})
