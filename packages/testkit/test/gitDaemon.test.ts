import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { makeTempDirectory } from "../src/fakeHttpServer.js"
import { git, type GitDaemon, newClone, startGitDaemon, tryGit } from "../src/gitDaemon.js"
import { processesMentioning } from "../src/processes.js"

/*
 * What a remote lease relies on, checked against a real git remote (git daemon on 127.0.0.1):
 * an atomic push is all or nothing, a lease holds only while the ref is where it was seen, an
 * empty lease only creates, and a branch is never rewound without force.
 */

let daemon: GitDaemon
let work: string
let repos = 0

beforeAll(async () => {
  work = makeTempDirectory("spool-git-daemon-test-")
  // Away from the machine's git configuration.
  writeFileSync(path.join(work, "gitconfig"), "")
  process.env.GIT_CONFIG_NOSYSTEM = "1"
  process.env.GIT_CONFIG_GLOBAL = path.join(work, "gitconfig")
  daemon = await startGitDaemon()
})

afterAll(async () => {
  await daemon?.stop()
  if (daemon !== undefined) rmSync(daemon.base, { recursive: true, force: true })
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

/** Every ref of a repository and where it points. */
const refs = (repo: string): Record<string, string> =>
  Object.fromEntries(
    tryGit(repo, "show-ref").stdout.split("\n").filter((line) => line !== "").map((line) => {
      const [sha, ref] = line.split(" ")
      return [ref!, sha!]
    })
  )

const commit = (repo: string, file: string, content: string): string => {
  writeFileSync(path.join(repo, file), content)
  git(repo, "add", file)
  git(repo, "commit", "-q", "-m", `${file}: ${content}`)
  return git(repo, "rev-parse", "HEAD").trim()
}

/** A served repository whose `main` holds one commit, and two clones of it (us and someone else). */
const remote = () => {
  const name = `r${++repos}`
  const seed = path.join(work, `${name}-seed`)
  git(work, "init", "-q", "-b", "main", seed)
  git(seed, "config", "user.name", "Seed")
  git(seed, "config", "user.email", "seed@example.com")
  const base = commit(seed, "README.md", "hello\n")
  const bare = daemon.createBare(name, seed)
  const url = daemon.url(name)
  return { bare, url, base, ours: newClone(url, path.join(work, `${name}-ours`)), theirs: newClone(url, path.join(work, `${name}-theirs`)) }
}

// Each test runs a few git commands against the daemon; a loaded machine must not fail one.
const TIMEOUT = 120_000

describe("startGitDaemon", () => {
  it("serves a bare repository over git:// on 127.0.0.1: a clone, a pushed branch", () => {
    const { bare, url, base, ours } = remote()
    expect(url).toBe(`git://127.0.0.1:${daemon.port}/r${repos}.git`)
    expect(bare).toBe(path.join(daemon.base, `r${repos}.git`))
    expect(git(ours, "remote", "get-url", "origin").trim()).toBe(url)
    expect(git(ours, "rev-parse", "HEAD").trim()).toBe(base)
    expect(git(ours, "config", "user.email").trim()).toBe("spool@example.com")

    git(ours, "switch", "-q", "-c", "feature")
    const tip = commit(ours, "a.txt", "a\n")
    git(ours, "push", "-q", "origin", "feature")

    expect(refs(bare)).toEqual({ "refs/heads/main": base, "refs/heads/feature": tip })
    expect(git(work, "ls-remote", url, "refs/heads/feature")).toBe(`${tip}\trefs/heads/feature\n`)
  }, TIMEOUT)

  it("stop ends the daemon and waits for it: no process of it is left, nothing answers at its address", async () => {
    const other = await startGitDaemon()
    const mark = `--port=${other.port}`
    try {
      other.createBare("x")
      expect(tryGit(work, "ls-remote", other.url("x")).status).toBe(0)
      // git and the git-daemon it runs.
      expect(processesMentioning(mark).length).toBeGreaterThanOrEqual(1)
    } finally {
      await other.stop()
      rmSync(other.base, { recursive: true, force: true })
    }
    expect(processesMentioning(mark)).toEqual([])
    const after = tryGit(work, "ls-remote", other.url("x"))
    expect(after.status).not.toBe(0)
    expect(after.stderr).toMatch(/unable to connect|Connection refused/)
  }, TIMEOUT)

  it("two daemons run side by side, each at its own port serving its own directory", async () => {
    const other = await startGitDaemon()
    try {
      expect(other.port).not.toBe(daemon.port)
      expect(other.base).not.toBe(daemon.base)
      other.createBare("only-here")
      expect(tryGit(work, "ls-remote", other.url("only-here")).status).toBe(0)
      const elsewhere = tryGit(work, "ls-remote", daemon.url("only-here"))
      expect(elsewhere.status).not.toBe(0)
      // --informative-errors: the daemon says why.
      expect(elsewhere.stderr).toContain("no such repository")
    } finally {
      await other.stop()
      rmSync(other.base, { recursive: true, force: true })
    }
  }, TIMEOUT)
})

describe("what a remote lease relies on, over git://", () => {
  it("a branch is not rewound without force: a non-fast-forward push is refused", () => {
    const { bare, base, ours, theirs } = remote()
    const theirTip = commit(theirs, "theirs.txt", "1\n")
    git(theirs, "push", "-q", "origin", "main")
    commit(ours, "ours.txt", "1\n")
    git(ours, "fetch", "-q", "origin")

    const pushed = tryGit(ours, "push", "origin", "main")
    expect(pushed.status).not.toBe(0)
    expect(pushed.stderr).toContain("[rejected]")
    expect(pushed.stderr).toContain("non-fast-forward")
    expect(refs(bare)).toEqual({ "refs/heads/main": theirTip })
    expect(theirTip).not.toBe(base)
  }, TIMEOUT)

  it("--force-with-lease=<ref>:<sha> moves the ref while it is at <sha>, and is refused once someone else moved it", () => {
    const { bare, base, ours, theirs } = remote()
    const lease = "refs/spool/lease/x"
    git(ours, "push", "-q", "origin", `${base}:${lease}`)
    expect(refs(bare)[lease]).toBe(base)

    // Held: the ref is where we saw it; it moves, though not a fast-forward of it is needed.
    const mine = commit(ours, "mine.txt", "1\n")
    git(ours, "push", "-q", `--force-with-lease=${lease}:${base}`, "origin", `${mine}:${lease}`)
    expect(refs(bare)[lease]).toBe(mine)

    // Someone else takes it.
    git(theirs, "fetch", "-q", "origin", lease)
    const theirs1 = commit(theirs, "theirs.txt", "1\n")
    git(theirs, "push", "-q", `--force-with-lease=${lease}:${mine}`, "origin", `${theirs1}:${lease}`)
    expect(refs(bare)[lease]).toBe(theirs1)

    // Our lease, still expecting our own commit, is refused and changes nothing.
    const mine2 = commit(ours, "mine.txt", "2\n")
    const before = refs(bare)
    const refused = tryGit(ours, "push", `--force-with-lease=${lease}:${mine}`, "origin", `${mine2}:${lease}`)
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("[rejected]")
    expect(refused.stderr).toContain("stale info")
    expect(refs(bare)).toEqual(before)
  }, TIMEOUT)

  it("--force-with-lease=<ref>: (an empty expectation) creates the ref only while it does not exist", () => {
    const { bare, base, ours, theirs } = remote()
    const lease = "refs/spool/lease/y"
    const theirTip = commit(theirs, "theirs.txt", "1\n")
    git(theirs, "push", "-q", `--force-with-lease=${lease}:`, "origin", `${theirTip}:${lease}`)
    expect(refs(bare)).toEqual({ "refs/heads/main": base, [lease]: theirTip })

    const refused = tryGit(ours, "push", `--force-with-lease=${lease}:`, "origin", `${base}:${lease}`)
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("stale info")
    expect(refs(bare)).toEqual({ "refs/heads/main": base, [lease]: theirTip })
  }, TIMEOUT)

  it("a ref is deleted under a lease that holds, and kept under one that does not", () => {
    const { bare, base, ours, theirs } = remote()
    const held = "refs/spool/lease/held"
    const moved = "refs/spool/lease/moved"
    git(ours, "push", "-q", "origin", `${base}:${held}`, `${base}:${moved}`)
    const theirTip = commit(theirs, "theirs.txt", "1\n")
    git(theirs, "push", "-q", "--force", "origin", `${theirTip}:${moved}`)

    const refused = tryGit(ours, "push", `--force-with-lease=${moved}:${base}`, "origin", `:${moved}`)
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("stale info")
    expect(refs(bare)[moved]).toBe(theirTip)

    git(ours, "push", "-q", `--force-with-lease=${held}:${base}`, "origin", `:${held}`)
    expect(refs(bare)).toEqual({ "refs/heads/main": base, [moved]: theirTip })
  }, TIMEOUT)

  it("an atomic push whose lease no longer holds changes neither of its two refs", () => {
    const { bare, base, ours, theirs } = remote()
    const lease = "refs/spool/lease/z"
    git(ours, "push", "-q", "origin", `${base}:${lease}`)
    const theirTip = commit(theirs, "theirs.txt", "1\n")
    git(theirs, "push", "-q", "--force", "origin", `${theirTip}:${lease}`)

    const work1 = commit(ours, "work.txt", "1\n")
    const before = refs(bare)
    const refused = tryGit(
      ours,
      "push",
      "--atomic",
      `--force-with-lease=${lease}:${base}`,
      "origin",
      `${work1}:refs/heads/work`,
      `${work1}:${lease}`
    )
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("stale info")
    expect(refused.stderr).toContain("atomic push failed")
    expect(refs(bare)).toEqual(before)
    expect(before).toEqual({ "refs/heads/main": base, [lease]: theirTip })
  }, TIMEOUT)

  it("the remote checks the lease again as it updates: a ref moved after it was advertised is not overwritten", () => {
    const { bare, base, ours, theirs } = remote()
    const lease = "refs/spool/lease/race"
    git(ours, "push", "-q", "origin", `${base}:${lease}`)
    const theirTip = commit(theirs, "theirs.txt", "1\n")
    git(theirs, "push", "-q", "origin", `${theirTip}:refs/heads/theirs`)
    // Someone else moves the lease between the remote's advertisement (where our lease holds) and its
    // update: the hook runs after the first and before the second. Ref updates are refused inside the
    // push's object quarantine, so the hook leaves it to move the ref as another push would have.
    const hook = path.join(bare, "hooks", "pre-receive")
    writeFileSync(
      hook,
      [
        "#!/bin/sh",
        "cat >/dev/null",
        `env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git update-ref ${lease} ${theirTip}`,
        ""
      ].join("\n"),
      { mode: 0o755 }
    )

    const work1 = commit(ours, "work.txt", "1\n")
    const refused = tryGit(
      ours,
      "push",
      "--atomic",
      `--force-with-lease=${lease}:${base}`,
      "origin",
      `${work1}:refs/heads/work`,
      `${work1}:${lease}`
    )
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain(`cannot lock ref '${lease}': is at ${theirTip} but expected ${base}`)
    expect(refused.stderr).toContain(`-> ${lease} (atomic transaction failed)`)
    expect(refused.stderr).toContain("-> work (atomic transaction failed)")
    expect(refs(bare)).toEqual({ "refs/heads/main": base, "refs/heads/theirs": theirTip, [lease]: theirTip })
  }, TIMEOUT)

  it("an atomic push one of whose refs the remote itself refuses changes neither", () => {
    const { bare, base, ours } = remote()
    // The client forces both; the remote refuses the rewind of main, so the new branch is not created either.
    git(bare, "config", "receive.denyNonFastForwards", "true")
    const rewound = commit(ours, "a.txt", "1\n")
    git(ours, "reset", "-q", "--hard", base)
    git(ours, "commit", "-q", "--amend", "-m", "rewritten")
    const rewritten = git(ours, "rev-parse", "HEAD").trim()
    expect(rewritten).not.toBe(base)

    const before = refs(bare)
    const refused = tryGit(ours, "push", "--atomic", "origin", `+${rewound}:refs/heads/new`, `+${rewritten}:refs/heads/main`)
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("non-fast-forward")
    expect(refs(bare)).toEqual(before)
    expect(before).toEqual({ "refs/heads/main": base })

    // Without --atomic the same push creates the branch and refuses only main.
    const split = tryGit(ours, "push", "origin", `+${rewound}:refs/heads/new`, `+${rewritten}:refs/heads/main`)
    expect(split.status).not.toBe(0)
    expect(refs(bare)).toEqual({ "refs/heads/main": base, "refs/heads/new": rewound })
  }, TIMEOUT)
})
