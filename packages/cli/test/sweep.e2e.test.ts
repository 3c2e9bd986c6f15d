import { describe, expect, it } from "@effect/vitest"
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { agentScript, alive, git, repositoryOf, spool, startSpool, stateDir } from "./support.js"

const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]

/** The summary's row of a change: its cells, split on runs of two spaces or more. */
const row = (stdout: string, changeId: string) =>
  stdout.split("\n").find((line) => line.startsWith(`${changeId} `))?.split(/ {2,}/) ?? []

const locks = (root: string) =>
  readdirSync(join(root, ".spool", ".state", "ralph")).filter((id) => existsSync(join(stateDir(root, id), "lock")))

describe("spool ralph --continue-ready (the built binary, scripted agents)", () => {
  it("goes through every ready change in order: one fails, one stops at its cap, two complete, a complete one is listed and not run; exit 1", async () => {
    const root = repositoryOf({
      "001-01_alpha": {},
      "001-02_beta": {},
      "001-03_gamma": { "tasks.md": "- [x] 1.1 done already\n" },
      "002-01_delta": {},
      "002-02_epsilon": {}
    })
    const agent = agentScript(`
import { writeFileSync } from "node:fs"
const id = process.env.SPOOL_CHANGE
if (id === "001-02_beta") { console.error("the build is broken"); process.exit(1) }
if (id === "002-01_delta") { console.log("still thinking"); process.exit(0) }
writeFileSync(id + ".txt", "done\\n")
console.log("The work on " + id + " is complete.\\n<promise>COMPLETE</promise>")
`)
    const result = await spool(
      ["ralph", "--continue-ready", ...harness(agent), "--max-consecutive-failures", "2", "--stall-iterations", "2", "--no-stream"],
      { cwd: root }
    )
    expect(result.code, result.stderr).toBe(1)
    expect(result.stdout).toContain("sweeping 4 ready changes: 001-01_alpha, 001-02_beta, 002-01_delta, 002-02_epsilon")
    expect(result.stdout.match(/^=== sweep: \S+ \(\d of 4\) ===$/gm)).toEqual([
      "=== sweep: 001-01_alpha (1 of 4) ===",
      "=== sweep: 001-02_beta (2 of 4) ===",
      "=== sweep: 002-01_delta (3 of 4) ===",
      "=== sweep: 002-02_epsilon (4 of 4) ==="
    ])
    expect(result.stdout).toContain("=== sweep: 5 changes: 2 complete, 1 failed, 1 already complete, 1 stopped ===")
    expect(row(result.stdout, "001-01_alpha").slice(0, 3)).toEqual(["001-01_alpha", "complete", "1"])
    expect(row(result.stdout, "001-02_beta").slice(0, 3)).toEqual(["001-02_beta", "failed", "2"])
    expect(row(result.stdout, "001-03_gamma").slice(0, 3)).toEqual(["001-03_gamma", "already complete", "-"])
    expect(row(result.stdout, "002-01_delta").slice(0, 3)).toEqual(["002-01_delta", "stopped", "2"])
    expect(row(result.stdout, "002-02_epsilon").slice(0, 3)).toEqual(["002-02_epsilon", "complete", "1"])
    // The last commit of each completed change is the one its loop made.
    const commits = git(root, "log", "--format=%h %s", "main").split("\n")
    expect(commits.map((line) => line.slice(line.indexOf(" ") + 1))).toEqual([
      "spool ralph: 002-02_epsilon iteration 1",
      "spool ralph: 001-01_alpha iteration 1",
      "initial"
    ])
    expect(row(result.stdout, "001-01_alpha")[6]).toBe(git(root, "rev-parse", "--short=12", "HEAD~1"))
    expect(result.stdout).toMatch(/^ {2}001-02_beta: the same error 2 times in a row \(--max-consecutive-failures 2\): the build is broken/m)
    expect(result.stdout).toMatch(/^ {2}002-01_delta: stopped: 2 iterations in a row made no progress/m)
    expect(result.stdout).toContain("total: 6 iterations")
    expect(locks(root)).toEqual([])
  })

  it("takes a change without a proposal.md for not ready: not run, the summary says why; exit 0", async () => {
    const root = repositoryOf({ "001-01_alpha": {} }, { ".spool/changes/001-02_draft/tasks.md": "- [ ] 1.1 write the proposal\n" })
    const agent = agentScript(`
console.log("done with " + process.env.SPOOL_CHANGE + "\\n<promise>COMPLETE</promise>")
`)
    const result = await spool(["ralph", "--continue-ready", ...harness(agent), "--no-commit", "--no-stream"], { cwd: root })
    expect([result.code, result.stderr]).toEqual([0, ""])
    expect(result.stdout).toContain("sweeping 1 ready change: 001-01_alpha\n")
    expect(result.stdout).toContain("=== sweep: 2 changes: 1 complete, 1 not started ===")
    expect(row(result.stdout, "001-02_draft").slice(0, 3)).toEqual(["001-02_draft", "not started", "-"])
    expect(result.stdout).toMatch(/^ {2}001-02_draft: not ready: no proposal\.md$/m)
    expect(existsSync(stateDir(root, "001-02_draft"))).toBe(false)
  })

  it("runs two loops at once with --max-parallel 2, each in its own worktree, their lines told apart; exit 0", async () => {
    const root = repositoryOf({ "001-01_alpha": {}, "001-02_beta": {} })
    const meet = mkdtempSync(join(tmpdir(), "spool-meet-"))
    // Each agent goes on only once the other has started: the sweep passes only if the two overlap.
    const agent = agentScript(`
import { existsSync, writeFileSync } from "node:fs"
const id = process.env.SPOOL_CHANGE
const other = id === "001-01_alpha" ? "001-02_beta" : "001-01_alpha"
writeFileSync(${JSON.stringify(meet)} + "/" + id, process.cwd())
for (let i = 0; !existsSync(${JSON.stringify(meet)} + "/" + other); i++) {
  if (i > 6000) { console.error("the other loop never started"); process.exit(1) }
  await new Promise((r) => setTimeout(r, 20))
}
writeFileSync(id + ".txt", "done\\n")
console.log("met the other loop in " + process.cwd() + "\\n<promise>COMPLETE</promise>")
`)
    const result = await spool(["ralph", "--continue-ready", "--max-parallel", "2", ...harness(agent)], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    for (const id of ["001-01_alpha", "001-02_beta"]) {
      const worktree = join(root, ".spool", ".state", "worktrees", id)
      expect(readFileSync(join(meet, id), "utf8")).toBe(worktree)
      expect(result.stdout).toContain(`[${id.slice(0, 6)}] met the other loop in ${worktree}`)
      expect(git(root, "log", "-1", "--format=%s", `spool/${id}`)).toBe(`spool ralph: ${id} iteration 1`)
      expect(row(result.stdout, id).slice(0, 2)).toEqual([id, "complete"])
      expect(row(result.stdout, id)[5]).toBe(`spool/${id}`)
    }
    // Without --merge the work stays on the branches: main and its work tree are as they were.
    expect(git(root, "log", "--format=%s", "main")).toBe("initial")
    expect(git(root, "status", "--porcelain")).toBe("")
    expect(locks(root)).toEqual([])
  })

  it("prefixes every line of a --max-parallel sweep's loops with the change, the last loop's too once the other has ended; exit 0", async () => {
    const root = repositoryOf({ "001-01_alpha": {}, "001-02_beta": {} })
    // alpha completes at once; beta goes on only once alpha's work is merged, after alpha's loop has ended.
    const agent = agentScript(`
import { existsSync, writeFileSync } from "node:fs"
const id = process.env.SPOOL_CHANGE
if (id === "001-02_beta") {
  console.log("beta waits for alpha")
  for (let i = 0; !existsSync(${JSON.stringify(root)} + "/001-01_alpha.txt"); i++) {
    if (i > 6000) { console.error("alpha was never merged"); process.exit(1) }
    await new Promise((r) => setTimeout(r, 20))
  }
  console.log("beta goes on alone")
}
writeFileSync(id + ".txt", "done\\n")
console.log(id + " is done\\n<promise>COMPLETE</promise>")
`)
    const result = await spool(["ralph", "--continue-ready", "--max-parallel", "2", "--merge", ...harness(agent)], { cwd: root })
    expect(result.code, result.stdout + result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^001-01_alpha: merged into main \([0-9a-f]{8}\)$/m)
    expect(result.stdout).toContain("[001-02] beta goes on alone\n")
    expect(result.stdout).toContain("[001-02] 001-02_beta is done\n")
    // The loops' lines, from the first to the last: every one carries its change.
    const lines = result.stdout.split("\n")
    const first = lines.findIndex((line) => line.startsWith("=== sweep: 001-01_alpha"))
    const last = lines.findIndex((line) => line.startsWith("=== sweep: 2 changes"))
    const loops = lines.slice(first, last).filter((line) =>
      line !== "" && !/^=== sweep: \S+ \(\d of 2\) ===$/.test(line) && !/^merging spool\//.test(line) && !/^001-0\d_\w+: merged into main/.test(line)
    )
    expect(loops.filter((line) => !/^\[001-0[12]\] /.test(line))).toEqual([])
    expect(loops.filter((line) => line.startsWith("[001-01] ")).length).toBeGreaterThan(0)
  })

  it("skips a change another loop holds as busy, and runs the rest; exit 0", async () => {
    const root = repositoryOf({ "001-01_alpha": {}, "001-02_beta": {} })
    const release = join(mkdtempSync(join(tmpdir(), "spool-release-")), "go")
    const agent = agentScript(`
import { existsSync, writeFileSync } from "node:fs"
if (process.env.SPOOL_CHANGE === "001-01_alpha") {
  console.log("holding alpha")
  while (!existsSync(${JSON.stringify(release)})) await new Promise((r) => setTimeout(r, 20))
}
writeFileSync(process.env.SPOOL_CHANGE + ".txt", "done\\n")
console.log("<promise>COMPLETE</promise>")
`)
    const holder = startSpool(["ralph", "--change", "001-01", "--no-commit", ...harness(agent)], root)
    await holder.waitFor("holding alpha")
    const result = await spool(["ralph", "-c", "001-01", "-c", "001-02", "--no-commit", ...harness(agent)], { cwd: root })
    writeFileSync(release, "")
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain("sweeping 2 ready changes: 001-01_alpha, 001-02_beta")
    expect(row(result.stdout, "001-01_alpha").slice(0, 2)).toEqual(["001-01_alpha", "busy"])
    expect(row(result.stdout, "001-02_beta").slice(0, 2)).toEqual(["001-02_beta", "complete"])
    expect(result.stdout).toMatch(/^ {2}001-01_alpha: a loop is already running on 001-01_alpha \(pid \d+/m)
    expect((await holder.done).code).toBe(0)
  })

  it("--merge: merges a clean change, leaves a conflicting one and one whose checks fail on the merged tree on their branches; exit 1", async () => {
    const root = repositoryOf({ "001-01_a": {}, "001-02_b": {}, "001-03_c": {}, "001-04_d": {} }, { "shared.txt": "base\n" })
    const meet = mkdtempSync(join(tmpdir(), "spool-meet-"))
    // The four start from the same commit (each waits for the others), then complete in an order the
    // merges depend on: c once b is merged into the work tree, d once a is.
    const agent = agentScript(`
import { existsSync, readFileSync, writeFileSync } from "node:fs"
const id = process.env.SPOOL_CHANGE
const until = async (ready) => {
  for (let i = 0; !ready(); i++) {
    if (i > 6000) { console.error("waited in vain"); process.exit(1) }
    await new Promise((r) => setTimeout(r, 20))
  }
}
const read = (file) => existsSync(file) ? readFileSync(file, "utf8") : ""
writeFileSync(${JSON.stringify(meet)} + "/" + id, "")
await until(() => ["001-01_a", "001-02_b", "001-03_c", "001-04_d"].every((other) => existsSync(${JSON.stringify(meet)} + "/" + other)))
if (id === "001-03_c") await until(() => read(${JSON.stringify(root)} + "/shared.txt") === "b\\n")
if (id === "001-04_d") await until(() => existsSync(${JSON.stringify(root)} + "/a.txt"))
const work = { "001-01_a": ["a.txt", "a\\n"], "001-02_b": ["shared.txt", "b\\n"], "001-03_c": ["shared.txt", "c\\n"], "001-04_d": ["d.txt", "d\\n"] }[id]
writeFileSync(work[0], work[1])
console.log("<promise>COMPLETE</promise>")
`)
    // a.txt and d.txt must not stand together: each change passes alone, d fails once merged onto a.
    const check = "! { test -f a.txt && test -f d.txt; }"
    const result = await spool(["ralph", "--continue-ready", "--merge", "--max-parallel", "4", "--verify", check, ...harness(agent)], { cwd: root })
    expect(result.code, result.stderr).toBe(1)
    expect(row(result.stdout, "001-01_a")[7]).toMatch(/^merged into main \([0-9a-f]{8}\)$/)
    expect(row(result.stdout, "001-02_b")[7]).toMatch(/^merged into main \([0-9a-f]{8}\)$/)
    expect(row(result.stdout, "001-03_c")[7]).toBe("not merged: conflict in shared.txt")
    expect(row(result.stdout, "001-04_d")[7]).toBe(`not merged: ${check} failed on the merged tree`)
    expect(result.stdout).toContain("total: 4 iterations, 2 merged into main")
    // main holds a and b, each merged on top of the one before; the work tree moved with it, clean.
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n")
    expect(readFileSync(join(root, "shared.txt"), "utf8")).toBe("b\n")
    expect(existsSync(join(root, "d.txt"))).toBe(false)
    expect(git(root, "status", "--porcelain")).toBe("")
    expect(git(root, "rev-parse", "HEAD")).toBe(git(root, "rev-parse", "main"))
    expect(git(root, "merge-base", "--is-ancestor", "spool/001-01_a", "main")).toBe("")
    expect(git(root, "merge-base", "--is-ancestor", "spool/001-02_b", "main")).toBe("")
    expect(git(root, "branch", "--format=%(refname:short)", "--contains", "spool/001-03_c")).toBe("spool/001-03_c")
    expect(git(root, "branch", "--format=%(refname:short)", "--contains", "spool/001-04_d")).toBe("spool/001-04_d")
    // The merged changes' worktrees are gone, the others stay; no merge is left behind.
    const worktrees = git(root, "worktree", "list", "--porcelain").split("\n").filter((line) => line.startsWith("branch "))
    expect(worktrees).toEqual(["branch refs/heads/main", "branch refs/heads/spool/001-03_c", "branch refs/heads/spool/001-04_d"])
    expect(readdirSync(join(root, ".spool", ".state", "merges"))).toEqual([])
  })

  it("--merge does not move a base whose work tree holds uncommitted changes, and leaves them be; exit 1", async () => {
    const root = repositoryOf({ "001-01_a": {} })
    writeFileSync(join(root, "README.md"), "my own edit\n")
    const agent = agentScript(`
import { writeFileSync } from "node:fs"
writeFileSync("a.txt", "a\\n")
console.log("<promise>COMPLETE</promise>")
`)
    const result = await spool(["ralph", "-c", "001-01", "--merge", ...harness(agent)], { cwd: root })
    expect(result.code, result.stderr).toBe(1)
    expect(row(result.stdout, "001-01_a")[7]).toBe(
      `not merged: main is checked out in ${root} with uncommitted changes; commit or stash them and merge by hand`
    )
    expect(git(root, "log", "--format=%s", "main")).toBe("initial")
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe("my own edit\n")
    expect(git(root, "log", "-1", "--format=%s", "spool/001-01_a")).toBe("spool ralph: 001-01_a iteration 1")
  })

  it("Ctrl-C stops every loop of a parallel sweep: no agent left, every lock released, the summary printed, exit 130", async () => {
    const root = repositoryOf({ "001-01_alpha": {}, "001-02_beta": {}, "001-03_gamma": {} })
    const pids = mkdtempSync(join(tmpdir(), "spool-pids-"))
    const agent = agentScript(`
import { writeFileSync } from "node:fs"
writeFileSync(${JSON.stringify(pids)} + "/" + process.env.SPOOL_CHANGE, String(process.pid))
console.log("working on " + process.env.SPOOL_CHANGE)
setInterval(() => {}, 1000)
`)
    const sweep = startSpool(["ralph", "--continue-ready", "--max-parallel", "2", ...harness(agent)], root)
    await sweep.waitFor("working on 001-01_alpha")
    await sweep.waitFor("working on 001-02_beta")
    sweep.child.kill("SIGINT")
    const ended = await sweep.done
    expect(ended.code).toBe(130)
    expect(sweep.output()).toContain("=== sweep: 3 changes: 2 interrupted, 1 not started ===")
    expect(row(sweep.output(), "001-03_gamma").slice(0, 2)).toEqual(["001-03_gamma", "not started"])
    for (const id of ["001-01_alpha", "001-02_beta"]) {
      expect(await alive(Number(readFileSync(join(pids, id), "utf8")))).toBe(false)
      expect(JSON.parse(readFileSync(join(stateDir(root, id), "state.json"), "utf8")).status).toBe("interrupted")
    }
    expect(existsSync(join(pids, "001-03_gamma"))).toBe(false)
    expect(locks(root)).toEqual([])
  })

  it("shares one usage-limit wait: a loop about to run waits for the limit another loop met instead of running into it; exit 0", async () => {
    const root = repositoryOf({ "001-01_alpha": {}, "001-02_beta": {} })
    const dir = mkdtempSync(join(tmpdir(), "spool-fake-limit-"))
    // An opencode stand-in for one account: alpha's first run meets a limit that lifts 15 s later (a
    // span beta's next iteration starts well within, on any machine), and any run started before then
    // meets it too. The two first runs overlap; beta's ends (without a claim) only once alpha waits
    // out the limit, so beta's second run would start while the limit lasts.
    const fake = join(dir, "opencode")
    writeFileSync(fake, `#!/usr/bin/env node
import { existsSync, readFileSync, writeFileSync } from "node:fs"
readFileSync(0)
const title = process.argv[process.argv.indexOf("--title") + 1]
const id = title.split(" ")[2]
const calls = ${JSON.stringify(dir)} + "/calls-" + id
const call = existsSync(calls) ? Number(readFileSync(calls, "utf8")) + 1 : 1
writeFileSync(calls, String(call))
const emit = (event) => process.stdout.write(JSON.stringify(event) + "\\n")
const text = (body) => emit({ type: "text", part: { id: "p" + call, type: "text", text: body } })
const until = async (ready, what) => {
  for (let i = 0; !ready(); i++) {
    if (i > 6000) { console.error(what + " never came"); process.exit(1) }
    await new Promise((r) => setTimeout(r, 20))
  }
}
// The two first runs overlap: each goes on once the other has started.
if (call === 1) {
  writeFileSync(${JSON.stringify(dir)} + "/started-" + id, "")
  await until(() => existsSync(${JSON.stringify(dir)} + "/started-" + (id === "001-01_alpha" ? "001-02_beta" : "001-01_alpha")), "the other run")
}
// One account: from alpha's first run on, every run meets the limit until it lifts.
const lifts = ${JSON.stringify(dir)} + "/limit-lifts-at"
if (id === "001-01_alpha" && call === 1) writeFileSync(lifts, String(Date.now() + 15_000))
const left = existsSync(lifts) ? Number(readFileSync(lifts, "utf8")) - Date.now() : 0
if (id === "001-02_beta" && call === 1) {
  // Started before the limit: it ends once alpha waits the limit out.
  const state = ${JSON.stringify(root)} + "/.spool/.state/ralph/001-01_alpha/state.json"
  await until(() => existsSync(state) && /"status":\\s*"waiting"/.test(readFileSync(state, "utf8")), "alpha's wait")
  text("not done yet")
} else if (left > 0) {
  emit({ type: "error", error: { name: "APIError", data: { message: "Rate limit reached", statusCode: 429, isRetryable: true, responseHeaders: { "retry-after": String(Math.ceil(left / 1000)) }, responseBody: "" } } })
  process.exitCode = 1
} else {
  writeFileSync(id + ".txt", "done\\n")
  text("Done. <promise>COMPLETE</promise>")
}
`)
    chmodSync(fake, 0o755)
    const result = await spool(["ralph", "--continue-ready", "--max-parallel", "2", "--no-interactive"], {
      cwd: root,
      env: { SPOOL_OPENCODE_BIN: fake }
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^\[001-01\] waiting for the usage limit until \S+ \(retry-after\); Ctrl-C stops the loop$/m)
    expect(result.stdout).toMatch(/^\[001-02\] waiting for the usage limit until \S+ \(another loop's limit\); Ctrl-C stops the loop$/m)
    // beta never ran into the limit: two runs, neither of them limited.
    expect(readFileSync(join(dir, "calls-001-02_beta"), "utf8")).toBe("2")
    const beta = JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-02"], { cwd: root })).stdout)
    expect(beta.history.map((record: { outcome: string }) => record.outcome), result.stdout).toEqual(["continue", "complete"])
    expect(row(result.stdout, "001-01_alpha").slice(0, 2)).toEqual(["001-01_alpha", "complete"])
    expect(row(result.stdout, "001-02_beta").slice(0, 2)).toEqual(["001-02_beta", "complete"])
  })
})
