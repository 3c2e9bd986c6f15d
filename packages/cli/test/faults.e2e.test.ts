import { type GitDaemon, newClone, startGitDaemon } from "@spool/testkit/gitDaemon"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { agentScript, alive, git, makeWorkspace, spool, startSpool } from "./support.js"

// Loops that move between machines, proven by faults: clones of one repository on a real git
// remote (git daemon on 127.0.0.1) starting at once, killed, paused past their lease, stopped by
// a deadline and resumed elsewhere. Nothing is lost, no two work on one change, nothing is forced.

const change = "001-01_greeting-cli"
const branch = `spool/${change}`
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]

/**
 * An agent that writes its iteration's file (and its pid beside `gate`), then waits at iteration
 * `waitAt` until the file `gate` exists, and claims completion at iteration `doneAt`.
 */
const gated = (gate: string, waitAt: number, doneAt: number, tag = "") =>
  agentScript(`
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
const it = Number(process.env.SPOOL_ITERATION)
writeFileSync(${JSON.stringify(gate)} + ".pid", String(process.pid))
mkdirSync("work", { recursive: true })
writeFileSync("work/" + it + ${JSON.stringify(tag)} + ".txt", "iteration " + it + "\\n")
console.log("started iteration " + it)
if (it === ${waitAt}) while (!existsSync(${JSON.stringify(gate)})) await new Promise((r) => setTimeout(r, 20))
console.log("ended iteration " + it)
if (it === ${doneAt}) console.log("<promise>COMPLETE</promise>")
`)

let daemon: GitDaemon
beforeAll(async () => {
  daemon = await startGitDaemon()
})
afterAll(async () => {
  await daemon?.stop()
})

let repos = 0
const remoteRepo = () => {
  const name = `f${++repos}`
  daemon.createBare(name, makeWorkspace())
  const bare = daemon.bare(name)
  // A remote that refuses any forced update of a branch, as protected branches do: spool never needs one.
  git(bare, "config", "receive.denyNonFastForwards", "true")
  return { bare, clone: () => newClone(daemon.url(name), join(realpathSync(mkdtempSync(join(tmpdir(), "spool-fault-"))), "repo")) }
}
const tempFile = (name: string) => join(realpathSync(mkdtempSync(join(tmpdir(), "spool-gate-"))), name)
const history = (bare: string) =>
  git(bare, "show", `refs/spool/state/${change}:history.jsonl`).split("\n").filter(Boolean).map((line) => JSON.parse(line))
const refNames = (bare: string) => git(bare, "for-each-ref", "--format=%(refname)").split("\n").filter(Boolean)
const commitsOf = (bare: string) => git(bare, "log", "--format=%s", branch).split("\n").filter((s) => s.startsWith("spool ralph:"))

/** Runs spool until it is not refused as busy (the lease it waits for lapses): the run that got through. */
const untilTaken = async (args: ReadonlyArray<string>, cwd: string) => {
  for (let i = 0; i < 600; i++) {
    const run = await spool(args, { cwd })
    if (run.code !== 73) return run
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error("the lease never lapsed")
}

describe("loops between machines, under faults", () => {
  it("of ten clones started on one change at once, exactly one works and nine exit 73", async () => {
    const remote = remoteRepo()
    const gate = tempFile("gate")
    const clones = Array.from({ length: 10 }, () => remote.clone())
    const runs = clones.map((cwd) =>
      startSpool(["ralph", "--change", "001-01", "--remote", "origin", "--resume", ...harness(gated(gate, 1, 1))], cwd)
    )
    // The nine that are refused end on their own; the one that works waits at its gate until then.
    while (runs.filter((run) => run.child.exitCode !== null).length < 9) await new Promise((r) => setTimeout(r, 20))
    const refused = runs.filter((run) => run.child.exitCode !== null)
    expect(refused.map((run) => run.child.exitCode), refused.map((run) => run.output()).join("\n")).toEqual(Array(9).fill(73))
    const worker = runs.find((run) => run.child.exitCode === null)!
    for (const run of runs.filter((r) => r !== worker)) {
      expect(run.output()).toMatch(/spool: another loop holds the lease of 001-01_greeting-cli on origin/)
    }
    writeFileSync(gate, "")
    expect((await worker.done).code, worker.output()).toBe(0)
    expect(history(remote.bare).map((r) => r.iteration)).toEqual([1])
    expect(commitsOf(remote.bare)).toHaveLength(1)
    expect(refNames(remote.bare)).not.toContain(`refs/spool/lease/${change}`)
  })

  it("a holder killed mid-iteration is taken over once its lease lapses; only the killed iteration is lost, no number is used twice", async () => {
    const remote = remoteRepo()
    const gate = tempFile("gate")
    const first = remote.clone()
    const killed = startSpool(["ralph", "--change", "001-01", "--remote", "origin", "--lease-ttl", "2s", ...harness(gated(gate, 2, 99, "-first"))], first)
    await killed.waitFor("started iteration 2")
    killed.child.kill("SIGKILL")
    await killed.done
    const agentPid = Number(readFileSync(`${gate}.pid`, "utf8"))
    process.kill(agentPid, "SIGKILL")
    expect(await alive(agentPid)).toBe(false)
    expect(history(remote.bare).map((r) => r.iteration)).toEqual([1])

    // Once its lease has lapsed, --status --remote tells the killed loop from one that runs.
    const lease = JSON.parse(git(remote.bare, "log", "-1", "--format=%B", `refs/spool/lease/${change}`)) as { expiresAt: string }
    while (Date.now() <= Date.parse(lease.expiresAt)) await new Promise((r) => setTimeout(r, 100))
    const status = await spool(["ralph", "--status", "--json", "--remote", "origin", "--change", "001-01"], { cwd: remote.clone() })
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ status: "running", abandoned: true, iteration: 1 })

    writeFileSync(gate, "")
    const second = remote.clone()
    const run = await untilTaken(["ralph", "--change", "001-01", "--remote", "origin", "--resume", "--lease-ttl", "2s", ...harness(gated(gate, 0, 3, "-second"))], second)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/took over the lease of 001-01_greeting-cli on origin from pid \d+ on .*, which expired at \S+ unrenewed/)
    const records = history(remote.bare)
    expect(records.map((r) => r.iteration)).toEqual([1, 2, 3])
    expect(new Set(records.map((r) => r.run)).size).toBe(1)
    // The branch holds the first holder's iteration 1 and the second's 2 and 3, one after another.
    expect(commitsOf(remote.bare).reverse()).toEqual([1, 2, 3].map((n) => `spool ralph: ${change} iteration ${n}`))
    expect(git(remote.bare, "show", "--name-only", "--format=", `${branch}~1`)).toContain("work/2-second.txt")
    expect(refNames(remote.bare)).not.toContain(`refs/spool/lease/${change}`)
  })

  it("a holder paused past its lease writes nothing to the remote once resumed, and exits 73", async () => {
    const remote = remoteRepo()
    const gate = tempFile("gate")
    const first = remote.clone()
    const paused = startSpool(["ralph", "--change", "001-01", "--remote", "origin", "--lease-ttl", "2s", ...harness(gated(gate, 2, 99, "-old"))], first)
    await paused.waitFor("started iteration 2")
    paused.child.kill("SIGSTOP")
    const pushedBefore = git(remote.bare, "rev-parse", branch)
    expect(history(remote.bare).map((r) => r.iteration)).toEqual([1])

    const second = remote.clone()
    const other = tempFile("other-gate")
    writeFileSync(other, "")
    const taken = await untilTaken(["ralph", "--change", "001-01", "--remote", "origin", "--resume", "--lease-ttl", "2s", ...harness(gated(other, 0, 3, "-new"))], second)
    expect(taken.code, taken.stderr).toBe(0)
    const after = git(remote.bare, "rev-parse", branch)
    const stateAfter = git(remote.bare, "rev-parse", `refs/spool/state/${change}`)

    // The old holder wakes, its agent ends the iteration it was in: its push is refused.
    paused.child.kill("SIGCONT")
    writeFileSync(gate, "")
    const ended = await paused.done
    expect(ended.code, paused.output()).toBe(73)
    expect(paused.output()).toMatch(/spool: the loop on 001-01_greeting-cli lost its lease on origin to another loop/)
    expect(git(remote.bare, "rev-parse", branch)).toBe(after)
    expect(git(remote.bare, "rev-parse", `refs/spool/state/${change}`)).toBe(stateAfter)
    // After the takeover, the branch holds only the new holder's iterations.
    expect(git(remote.bare, "log", "--format=%s", `${pushedBefore}..${branch}`).split("\n").reverse()).toEqual(
      [2, 3].map((n) => `spool ralph: ${change} iteration ${n}`)
    )
    expect(git(remote.bare, "log", "--name-only", "--format=", `${pushedBefore}..${branch}`)).not.toContain("-old.txt")
    expect(history(remote.bare).map((r) => r.iteration)).toEqual([1, 2, 3])
  })

  it("a lease that moves while it is read (renewed, given up, taken again) is read as it is, never as an error", async () => {
    const remote = remoteRepo()
    const holder = remote.clone()
    const stop = tempFile("stop")
    // Another machine's loop, renewing its lease as fast as it can and now and then giving it up.
    const renewing = agentScript(`
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
const git = (...args) => execFileSync("git", args, { cwd: ${JSON.stringify(holder)}, encoding: "utf8" }).trim()
const tree = git("mktree")
for (let n = 0; !existsSync(${JSON.stringify(stop)}); n++) {
  const now = Date.now()
  const lease = { holder: "ci-9/99/renews", host: "ci-9", pid: 99, takenAt: new Date(now).toISOString(), renewedAt: new Date(now + n).toISOString(), expiresAt: new Date(now + 3_600_000).toISOString() }
  if (n % 7 === 6) git("push", "-q", "origin", ":refs/spool/lease/${change}")
  else git("push", "-q", "-f", "origin", git("commit-tree", tree, "-m", JSON.stringify(lease)) + ":refs/spool/lease/${change}")
}
`)
    const [program, script] = renewing.split(" ") as [string, string]
    const child = spawn(program, [script], { stdio: "ignore" })
    try {
      const clone = remote.clone()
      for (let i = 0; i < 6; i++) {
        const run = await spool(["ralph", "--change", "001-01", "--remote", "origin", ...harness(gated(stop, 0, 1))], { cwd: clone })
        // Taken while it was given up (and then done at once), or refused as held: never a failure.
        expect([0, 73], run.stderr).toContain(run.code)
        const listed = await spool(["ralph", "--list", "--json", "--remote", "origin"], { cwd: clone })
        expect(listed.code, listed.stderr).toBe(0)
      }
    } finally {
      writeFileSync(stop, "")
      await new Promise((r) => child.on("close", r))
    }
  })

  it("a run stopped by its deadline goes on in another clone, its caps counting the whole run", async () => {
    const remote = remoteRepo()
    const gate = tempFile("gate")
    const first = remote.clone()
    const stopped = await spool(["ralph", "--change", "001-01", "--remote", "origin", "--deadline", "2s", ...harness(gated(gate, 1, 99))], { cwd: first })
    expect(stopped.code, stopped.stderr).toBe(75)
    const state = JSON.parse(git(remote.bare, "show", `refs/spool/state/${change}:state.json`))
    expect(state).toMatchObject({ status: "deadline", iteration: 1 })
    expect(existsSync(gate)).toBe(false)

    // Another clone resumes with --max-duration no longer than the run has lasted: nothing is left of it.
    writeFileSync(gate, "")
    const second = remote.clone()
    const resumed = await spool(
      ["ralph", "--change", "001-01", "--remote", "origin", "--resume", "--max-duration", `${Math.floor(state.elapsedMs)}ms`, ...harness(gated(gate, 0, 1))],
      { cwd: second }
    )
    expect(resumed.code, resumed.stderr).toBe(4)
    expect(resumed.stdout).toContain("stopped: --max-duration")
    expect(history(remote.bare).map((r) => [r.iteration, r.outcome])).toEqual([[1, "stopped"]])
    // With room left, it goes on at iteration 2 of the same run.
    const third = remote.clone()
    const done = await spool(["ralph", "--change", "001-01", "--remote", "origin", "--resume", ...harness(gated(gate, 0, 2))], { cwd: third })
    expect(done.code, done.stderr).toBe(0)
    expect(history(remote.bare).map((r) => r.iteration)).toEqual([1, 2])
    expect(new Set(history(remote.bare).map((r) => r.run)).size).toBe(1)
  })
})
