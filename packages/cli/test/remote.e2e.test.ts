import { startGitDaemon, type GitDaemon, newClone } from "@spool/testkit/gitDaemon"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { GitRemoteHome } from "@spool/git"
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { addChange, agentScript, git, makeWorkspace, spool, startSpool, stateDir } from "./support.js"

// A change's loop kept on a real git remote (git daemon on 127.0.0.1): the lease, the branch and
// the state travel in git, so another clone goes on where the last one stopped.

const change = "001-01_greeting-cli"
const branch = `spool/${change}`
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]

/** An agent that writes one file per iteration and claims completion at iteration `doneAt` (never when 0). */
const working = (doneAt: number) =>
  agentScript(`
import { mkdirSync, writeFileSync } from "node:fs"
const it = Number(process.env.SPOOL_ITERATION)
mkdirSync("work", { recursive: true })
writeFileSync("work/" + it + ".txt", "iteration " + it + "\\n")
console.log("did iteration " + it)
if (it === ${doneAt}) console.log("<promise>COMPLETE</promise>")
`)

/** An agent that works `ms` per iteration, writing its file first. */
const slow = (ms: number) =>
  agentScript(`
import { mkdirSync, writeFileSync } from "node:fs"
const it = Number(process.env.SPOOL_ITERATION)
mkdirSync("work", { recursive: true })
writeFileSync("work/" + it + ".txt", "iteration " + it + "\\n")
console.log("started iteration " + it)
await new Promise((r) => setTimeout(r, ${ms}))
console.log("ended iteration " + it)
`)

let daemon: GitDaemon
beforeAll(async () => {
  daemon = await startGitDaemon()
})
afterAll(async () => {
  await daemon?.stop()
})

let repos = 0
/** A bare repository on the daemon holding the example workspace (changed by `setup`), and a way to clone it afresh. */
const remoteRepo = (setup?: (root: string) => void) => {
  const name = `r${++repos}`
  const root = makeWorkspace()
  if (setup !== undefined) {
    setup(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "more changes")
  }
  daemon.createBare(name, root)
  return {
    url: daemon.url(name),
    bare: daemon.bare(name),
    clone: () => newClone(daemon.url(name), join(realpathSync(mkdtempSync(join(tmpdir(), "spool-clone-"))), "repo"))
  }
}

const refs = (bare: string) =>
  Object.fromEntries(
    git(bare, "for-each-ref", "--format=%(refname) %(objectname)").split("\n").filter(Boolean).map((line) => line.split(" ") as [string, string])
  )
const remoteHistory = (bare: string) =>
  git(bare, "show", `refs/spool/state/${change}:history.jsonl`).split("\n").filter(Boolean).map((line) => JSON.parse(line))
const remoteState = (bare: string) => JSON.parse(git(bare, "show", `refs/spool/state/${change}:state.json`))
const iterationCommits = (bare: string) => git(bare, "log", "--format=%s", branch).split("\n").filter((s) => s.startsWith("spool ralph:"))

/** Pushes, from `clone`, a lease of another machine on `changeId` lasting until `until`, as a loop elsewhere would hold it. */
const pushLease = (clone: string, changeId: string, until: number) => {
  const lease = { holder: "ci-7/4242/zzzzzz", host: "ci-7", pid: 4242, takenAt: new Date().toISOString(), renewedAt: new Date().toISOString(), expiresAt: new Date(until).toISOString() }
  const commit = git(clone, "commit-tree", git(clone, "mktree"), "-m", JSON.stringify(lease))
  git(clone, "push", "-q", "origin", `${commit}:refs/spool/lease/${changeId}`)
  return lease
}

describe("spool ralph --list", () => {
  it("lists every change and its state, here and on the remote, with the holder of a live lease", async () => {
    const remote = remoteRepo((root) => {
      addChange(root, "001-02_second")
      addChange(root, "001-03_done")
      writeFileSync(join(root, ".spool", "changes", "001-03_done", "tasks.md"), "- [x] 1.1 The only task\n")
      addChange(root, "001-04_third")
      mkdirSync(join(root, ".spool", "changes", "archive", "2026-01-02-000-01_old"), { recursive: true })
      writeFileSync(join(root, ".spool", "changes", "archive", "2026-01-02-000-01_old", "proposal.md"), "# old\n")
    })
    const worker = remote.clone()
    const ran = await spool(["ralph", "--change", "001-02", "--remote", "origin", ...harness(working(1))], { cwd: worker })
    expect(ran.code, ran.stderr).toBe(0)
    const lease = pushLease(worker, "001-04_third", Date.now() + 3_600_000)
    pushLease(worker, change, Date.now() - 1000)

    const fresh = remote.clone()
    const listed = await spool(["ralph", "--list", "--json", "--remote", "origin"], { cwd: fresh })
    expect(listed.code, listed.stderr).toBe(0)
    const byId = Object.fromEntries(JSON.parse(listed.stdout).map((c: { id: string }) => [c.id, c]))
    expect(Object.keys(byId)).toEqual([change, "001-02_second", "001-03_done", "001-04_third", "2026-01-02-000-01_old"])
    // An expired lease holds nothing: its change is ready for the next job.
    expect(byId[change]).toMatchObject({ ready: true, state: "ready", holder: null, tasks: { done: 0, total: 3 } })
    expect(byId["001-02_second"]).toMatchObject({ ready: false, state: "complete", lastStatus: "complete", iteration: 1 })
    expect(byId["001-03_done"]).toMatchObject({ ready: false, state: "complete", why: "every task is done" })
    expect(byId["001-04_third"]).toMatchObject({ ready: false, state: "running", holder: "pid 4242 on ci-7", leaseExpiresAt: lease.expiresAt })
    expect(byId["2026-01-02-000-01_old"]).toMatchObject({ ready: false, state: "archived" })
    expect(JSON.parse(listed.stdout).filter((c: { ready: boolean }) => c.ready).map((c: { id: string }) => c.id)).toEqual([change])

    // Here, the fresh clone knows of no run: the remote's states are the remote's.
    const here = await spool(["ralph", "--list", "--json"], { cwd: fresh })
    expect(JSON.parse(here.stdout).filter((c: { ready: boolean }) => c.ready).map((c: { id: string }) => c.id)).toEqual([change, "001-02_second", "001-04_third"])
    const text = await spool(["ralph", "--list", "--remote", "origin"], { cwd: fresh })
    expect(text.stdout).toMatch(new RegExp(`001-04_third\\s+running\\s+pid 4242 on ci-7, lease until ${lease.expiresAt.replace(/\./g, "\\.")}`))
    expect(text.stdout).toMatch(/2026-01-02-000-01_old\s+archived/)

    // --status --remote shows the remote's record of a run this clone never saw.
    const status = await spool(["ralph", "--status", "--json", "--remote", "origin", "--change", "001-02"], { cwd: fresh })
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ changeId: "001-02_second", status: "complete", iteration: 1 })
    // Reading the remote leaves no trace here.
    expect(git(fresh, "status", "--porcelain", "--ignored")).toBe("")
  })

  it("shares one backlog between machines: a sweep skips a change leased elsewhere as busy", async () => {
    const remote = remoteRepo((root) => {
      addChange(root, "001-02_second")
      addChange(root, "001-03_third")
    })
    const clone = remote.clone()
    pushLease(clone, "001-02_second", Date.now() + 3_600_000)
    const swept = await spool(["ralph", "--continue-ready", "--remote", "origin", "--resume", ...harness(working(1))], { cwd: clone })
    expect(swept.code, swept.stderr).toBe(0)
    expect(swept.stdout).toMatch(/001-02_second\s+busy/)
    const names = Object.keys(refs(remote.bare))
    expect(names).toContain(`refs/heads/spool/${change}`)
    expect(names).toContain("refs/heads/spool/001-03_third")
    expect(names).not.toContain("refs/heads/spool/001-02_second")
    expect(names).not.toContain("refs/spool/state/001-02_second")
    const listed = JSON.parse((await spool(["ralph", "--list", "--json", "--remote", "origin"], { cwd: remote.clone() })).stdout)
    expect(listed.map((c: { id: string; state: string }) => [c.id, c.state])).toEqual([[change, "complete"], ["001-02_second", "running"], ["001-03_third", "complete"]])
    // Another machine's sweep goes by the remote: what is complete there is not swept again.
    const again = await spool(["ralph", "--continue-ready", "--remote", "origin", "--resume", ...harness(working(1))], { cwd: remote.clone() })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain("sweeping 1 ready change: 001-02_second")
    expect(again.stdout).toMatch(/001-01_greeting-cli\s+already complete/)
    expect(again.stdout).toMatch(/001-02_second\s+busy/)
  })

  it("says when the remote is not one of the repository's", async () => {
    const fresh = remoteRepo().clone()
    const result = await spool(["ralph", "--list", "--remote", "upstream"], { cwd: fresh })
    expect(result.code).toBe(2)
    expect(result.stderr).toBe("spool: --remote upstream: the repository has no remote of that name; add it with git remote add upstream <url>\n")
  })
})

describe("spool ralph --remote", () => {
  it("keeps the branch, the state and no lease on the remote, and another clone resumes the run where it stopped", async () => {
    const remote = remoteRepo()
    const first = remote.clone()
    const one = await spool(["ralph", "--change", "001-01", "--remote", "origin", "--max-iterations", "2", ...harness(working(0))], { cwd: first })
    expect(one.code, one.stderr).toBe(3)
    expect(one.stdout).toContain(`on origin: no branch ${branch} yet, it starts from the current branch; the lease is this loop's`)
    const after = refs(remote.bare)
    expect(Object.keys(after)).toContain(`refs/heads/${branch}`)
    expect(Object.keys(after)).toContain(`refs/spool/state/${change}`)
    expect(Object.keys(after)).not.toContain(`refs/spool/lease/${change}`)
    expect(remoteHistory(remote.bare).map((r) => r.iteration)).toEqual([1, 2])
    // The state travels apart from the change's commits, which hold only the agent's work.
    expect(git(remote.bare, "ls-tree", "-r", "--name-only", branch)).not.toContain(".state")
    expect(git(remote.bare, "ls-tree", "--name-only", `refs/spool/state/${change}`).split("\n")).not.toContain("lock")

    const second = remote.clone()
    const two = await spool(["ralph", "--change", "001-01", "--remote", "origin", "--resume", "--max-iterations", "5", ...harness(working(3))], { cwd: second })
    expect(two.code, two.stderr).toBe(0)
    expect(two.stdout).toContain(`on origin: branch ${branch} and the loop's state fetched`)
    expect(two.stdout).toContain("resuming run")
    const history = remoteHistory(remote.bare)
    expect(history.map((r) => r.iteration)).toEqual([1, 2, 3])
    expect(new Set(history.map((r) => r.run)).size).toBe(1)
    expect(remoteState(remote.bare)).toMatchObject({ status: "complete", iteration: 3, run: history[0].run })
    // Each iteration's commit is on the remote branch, the first two pushed by the first clone.
    expect(iterationCommits(remote.bare)).toHaveLength(3)
    expect(git(remote.bare, "merge-base", "--is-ancestor", after[`refs/heads/${branch}`]!, branch)).toBe("")
    expect(Object.keys(refs(remote.bare))).not.toContain(`refs/spool/lease/${change}`)

    // Resumed once more, the completed run runs nothing.
    const third = remote.clone()
    const three = await spool(["ralph", "--change", "001-01", "--remote", "origin", "--resume", ...harness(working(1))], { cwd: third })
    expect(three.code, three.stderr).toBe(0)
    expect(three.stdout).toContain("nothing to resume")
    expect(remoteHistory(remote.bare)).toHaveLength(3)
  })

  it("--status --remote shows a loop's worktree only in the clone it is in: another clone's is a path on that machine", async () => {
    const remote = remoteRepo()
    const first = remote.clone()
    const ran = await spool(["ralph", "--change", "001-01", "--remote", "origin", "--max-iterations", "1", ...harness(working(0))], { cwd: first })
    expect(ran.code, ran.stderr).toBe(3)
    const worktree = join(first, ".spool", ".state", "worktrees", change)
    expect(remoteState(remote.bare).worktree).toBe(worktree)

    const second = remote.clone()
    const text = await spool(["ralph", "--status", "--remote", "origin", "--change", "001-01"], { cwd: second })
    expect([text.code, text.stderr]).toEqual([0, ""])
    expect(text.stdout).toContain(`branch:    ${branch}`)
    expect(text.stdout).not.toContain("worktree:")
    expect(text.stdout).not.toContain(first)
    const json = await spool(["ralph", "--status", "--json", "--remote", "origin", "--change", "001-01"], { cwd: second })
    expect(JSON.parse(json.stdout)).toMatchObject({ changeId: change, branch, worktree: null, iteration: 1 })

    // In the clone that ran it, the worktree is its own.
    const own = await spool(["ralph", "--status", "--json", "--remote", "origin", "--change", "001-01"], { cwd: first })
    expect(JSON.parse(own.stdout)).toMatchObject({ changeId: change, branch, worktree })
  })

  it("exits 73 and writes nothing while another machine's lease is live", async () => {
    const remote = remoteRepo()
    const lease = pushLease(remote.clone(), change, Date.now() + 3_600_000)
    const before = refs(remote.bare)
    const mine = remote.clone()
    const result = await spool(["ralph", "--change", "001-01", "--remote", "origin", ...harness(working(1))], { cwd: mine })
    expect(result.code).toBe(73)
    expect(result.stderr).toContain(`spool: another loop holds the lease of ${change} on origin (pid 4242 on ci-7, until ${lease.expiresAt})`)
    expect(refs(remote.bare)).toEqual(before)
    expect(git(mine, "status", "--porcelain")).toBe("")
  })

  it("ends at --deadline with exit 75, the iteration stopped, recorded and pushed, the lease given up", async () => {
    const remote = remoteRepo()
    const clone = remote.clone()
    const result = await spool(["ralph", "--change", "001-01", "--remote", "origin", "--deadline", "3s", ...harness(slow(120_000))], { cwd: clone })
    expect(result.code, result.stderr).toBe(75)
    expect(result.stdout).toMatch(/stopped: --deadline \S+ came during the iteration; not done; continue in a later job with --resume/)
    expect(remoteHistory(remote.bare).map((r) => [r.iteration, r.outcome])).toEqual([[1, "stopped"]])
    expect(remoteState(remote.bare)).toMatchObject({ status: "deadline", stopReason: "deadline" })
    expect(iterationCommits(remote.bare)).toHaveLength(1)
    expect(Object.keys(refs(remote.bare))).not.toContain(`refs/spool/lease/${change}`)
  })

  it("on SIGTERM records the iteration, pushes, gives the lease up and exits 143", async () => {
    const remote = remoteRepo()
    const clone = remote.clone()
    const run = startSpool(["ralph", "--change", "001-01", "--remote", "origin", ...harness(slow(120_000))], clone)
    await run.waitFor("started iteration 1")
    run.child.kill("SIGTERM")
    const ended = await run.done
    expect(ended.code, run.output()).toBe(143)
    expect(remoteState(remote.bare)).toMatchObject({ status: "interrupted" })
    expect(remoteHistory(remote.bare).map((r) => [r.iteration, r.outcome])).toEqual([[1, "interrupted"]])
    expect(Object.keys(refs(remote.bare))).not.toContain(`refs/spool/lease/${change}`)
    expect(readFileSync(join(stateDir(clone, change), "state.json"), "utf8")).toContain("interrupted")
  })
})

/** A server on 127.0.0.1 that takes connections and never answers: a remote that hangs. */
const silentServer = async () => {
  const sockets: Array<Socket> = []
  const server: Server = createServer((socket) => void sockets.push(socket))
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
  const { port } = server.address() as { port: number }
  return {
    url: `git://127.0.0.1:${port}/silent.git`,
    connections: () => sockets.length,
    close: () => new Promise<void>((closed) => {
      sockets.forEach((socket) => socket.destroy())
      server.close(() => closed())
    })
  }
}

describe("a remote that stops answering", () => {
  it("on Ctrl-C ends all the same: exit 130, the work kept here, one line saying the lease is left to expire", async () => {
    const silent = await silentServer()
    try {
      const remote = remoteRepo()
      const clone = remote.clone()
      const run = startSpool(["ralph", "--change", "001-01", "--remote", "origin", ...harness(slow(120_000))], clone)
      await run.waitFor("started iteration 1")
      // From now on every push, fetch and listing of origin waits for an answer that never comes.
      git(clone, "remote", "set-url", "origin", silent.url)
      run.child.kill("SIGINT")
      const ended = await run.done
      expect(ended.code, run.output()).toBe(130)
      const leftToExpire = run.output().split("\n").filter((line) => line.includes("left to expire"))
      expect(leftToExpire).toHaveLength(1)
      expect(leftToExpire[0]).toMatch(
        new RegExp(`^warning: the lease of ${change} on origin is left to expire at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: the remote did not answer in time to give it up$`)
      )
      // It did try the silent remote (the push of the interrupted iteration, then the lease).
      expect(silent.connections()).toBeGreaterThan(0)
      // The lease stays on the real remote, to lapse by itself; the iteration is kept here.
      expect(Object.keys(refs(remote.bare))).toContain(`refs/spool/lease/${change}`)
      expect(readFileSync(join(stateDir(clone, change), "state.json"), "utf8")).toContain("interrupted")
    } finally {
      await silent.close()
    }
  })
})

describe("what --remote says", () => {
  it("says in one line when the remote cannot be reached, and what to do", async () => {
    const root = makeWorkspace()
    git(root, "remote", "add", "origin", "git://127.0.0.1:1/nowhere.git")
    const result = await spool(["ralph", "--change", "001-01", "--remote", "origin", ...harness(working(1))], { cwd: root })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^spool: could not read the lease of 001-01_greeting-cli on the remote origin: .*; check that it can be reached \(git fetch origin\), then run again with --resume\n$/)
    expect(git(root, "status", "--porcelain")).toBe("")
  })

  it("hides a URL's credentials in the remote's errors", async () => {
    expect(GitRemoteHome.hideCredentials("fatal: unable to access 'https://gitlab-ci-token:glcbt-64_s3cr3t@gitlab.example.com/team/repo.git/': 403")).toBe(
      "fatal: unable to access 'https://[REDACTED]@gitlab.example.com/team/repo.git/': 403"
    )
  })
})

describe("spool ralph --resume", () => {
  it("goes on with the last run here, and --status shows it as one run", async () => {
    const root = makeWorkspace()
    const first = await spool(["ralph", "--change", "001-01", "--max-iterations", "2", ...harness(working(0))], { cwd: root })
    expect(first.code, first.stderr).toBe(3)
    const resumed = await spool(["ralph", "--change", "001-01", "--resume", "--max-iterations", "5", ...harness(working(3))], { cwd: root })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toMatch(/resuming run \S+ at iteration 3 \(so far: cost unknown, 0 tokens, \S+\)/)
    const status = JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)
    expect(status).toMatchObject({ status: "complete", iteration: 3 })
    const history = readFileSync(join(stateDir(root, change), "history.jsonl"), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line))
    expect(history.map((r) => r.iteration)).toEqual([1, 2, 3])
    expect(new Set(history.map((r) => r.run))).toEqual(new Set([status.run]))
    // A new run, without --resume, numbers from 1 again.
    const fresh = await spool(["ralph", "--change", "001-01", ...harness(working(1))], { cwd: root })
    expect(fresh.code, fresh.stderr).toBe(0)
    expect(JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout).run).not.toBe(status.run)
  })
})
