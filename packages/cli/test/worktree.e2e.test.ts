import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { addChange, agentScript, git, makeWorkspace, spawnSpool, spool, stateDir } from "./support.js"

const first = "001-01_greeting-cli"
const second = "001-02_second"
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]
const done = agentScript("console.log('<promise>COMPLETE</promise>')")

/** The example workspace with a second change, both committed, in a repository whose path has no symlinks. */
const twoChanges = () => {
  const root = realpathSync(makeWorkspace())
  addChange(root, second)
  git(root, "add", "-A")
  git(root, "commit", "-qm", "second change")
  return root
}

const worktreeOf = (root: string, changeId: string) => join(root, ".spool", ".state", "worktrees", changeId)

const statusJson = async (cwd: string, ...args: Array<string>) => {
  const result = await spool(["ralph", "--status", "--json", ...args], { cwd })
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

/**
 * Two agents that meet at every iteration: each writes its own file only once the other has
 * started, and exits only once the other has written, so both work trees hold both iterations'
 * edits at once. The agent of the first change also ticks its tasks in the second iteration.
 */
const meetingAgent = (sync: string) =>
  agentScript(`
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
const id = process.env.SPOOL_CHANGE
const it = Number(process.env.SPOOL_ITERATION)
const mine = id === ${JSON.stringify(first)} ? "a" : "b"
const other = mine === "a" ? "b" : "a"
const meet = async (step) => {
  writeFileSync(${JSON.stringify(sync)} + "/" + mine + "-" + it + step, "")
  for (let i = 0; !existsSync(${JSON.stringify(sync)} + "/" + other + "-" + it + step); i++) {
    if (i > 6000) { console.error("the other loop never came"); process.exit(1) }
    await new Promise((r) => setTimeout(r, 20))
  }
}
await meet("started")
mkdirSync("out", { recursive: true })
writeFileSync("out/" + mine + "-" + it + ".txt", id + " iteration " + it + "\\n")
if (mine === "a" && it === 2) {
  const tasks = ".spool/changes/" + id + "/tasks.md"
  writeFileSync(tasks, readFileSync(tasks, "utf8").replaceAll("- [ ]", "- [x]"))
}
await meet("written")
console.log("iteration " + it + " of " + id + " in " + process.cwd())
if (it === 2) console.log("<promise>COMPLETE</promise>")
`)

describe("spool ralph --worktree", () => {
  it("runs two loops at once, each in its own worktree: every branch, commit and summary holds only its own agent's work", async () => {
    const root = twoChanges()
    const start = git(root, "rev-parse", "HEAD")
    const agent = meetingAgent(mkdtempSync(join(tmpdir(), "spool-meet-")))
    const [a, b] = await Promise.all([
      spool(["ralph", "x", "--change", first, "--worktree", ...harness(agent)], { cwd: root }),
      spool(["ralph", "x", "--change", second, "--worktree", ...harness(agent)], { cwd: root })
    ])
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)

    for (const [result, id, mine] of [[a, first, "a"], [b, second, "b"]] as const) {
      const worktree = worktreeOf(root, id)
      expect(result.stdout).toContain(`made the worktree ${worktree} on branch spool/${id}`)
      expect(result.stdout).toContain(`iteration 1 of ${id} in ${worktree}`)
      expect(result.stdout).toContain(`to bring the work in: git merge spool/${id}   (worktree: ${worktree})`)
      expect(git(root, "ls-tree", "-r", "--name-only", `spool/${id}`, "--", "out").split("\n")).toEqual([`out/${mine}-1.txt`, `out/${mine}-2.txt`])
      expect(git(root, "log", "--format=%s", `${start}..spool/${id}`).split("\n")).toEqual([
        `spool ralph: ${id} iteration 2`,
        `spool ralph: ${id} iteration 1`
      ])
      expect(git(worktree, "status", "--porcelain")).toBe("")
      const status = await statusJson(root, "--change", id)
      expect(status).toMatchObject({ status: "complete", branch: `spool/${id}`, worktree })
      expect(status.history.map((r: { git: { files: Array<string> } }) => r.git.files)).toEqual([
        [`out/${mine}-1.txt`],
        mine === "a" ? [`.spool/changes/${id}/tasks.md`, "out/a-2.txt"] : ["out/b-2.txt"]
      ])
    }
    // The tasks ticked in the worktree count.
    expect((await statusJson(root, "--change", first)).tasks).toEqual({ total: 3, complete: 3, shelved: 0 })

    expect(git(root, "rev-parse", "HEAD")).toBe(start)
    expect(git(root, "status", "--porcelain", "--untracked-files=all")).toBe("")
    expect(existsSync(join(root, "out"))).toBe(false)

    const text = (await spool(["ralph", "--status", "--change", first], { cwd: root })).stdout
    expect(text).toContain(`branch:    spool/${first}`)
    expect(text).toContain(`worktree:  ${worktreeOf(root, first)}`)

    git(root, "merge", "-q", `spool/${first}`)
    expect(readFileSync(join(root, "out", "a-2.txt"), "utf8")).toBe(`${first} iteration 2\n`)
    expect(existsSync(join(root, "out", "b-1.txt"))).toBe(false)
  })

  it("inside a worktree, status and context are the main work tree's, for that worktree's change", async () => {
    const root = twoChanges()
    expect((await spool(["ralph", "x", "--change", second, "--worktree", ...harness(done)], { cwd: root })).code).toBe(0)
    const inside = join(worktreeOf(root, second), "src")
    const status = await statusJson(inside)
    expect(status).toMatchObject({ changeId: second, status: "complete", branch: `spool/${second}` })
    const added = await spool(["ralph", "--add-context", "use the v2 API"], { cwd: inside })
    expect(added.code, added.stderr).toBe(0)
    expect(readFileSync(join(stateDir(root, second), "context.txt"), "utf8")).toContain("use the v2 API")
    expect(existsSync(join(worktreeOf(root, second), ".spool", ".state"))).toBe(false)

    // A loop started inside the worktree runs there: the worktree is reused.
    const again = await spool(["ralph", "x", ...harness(done)], { cwd: inside })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain(`reusing the worktree ${worktreeOf(root, second)} on branch spool/${second}`)
  })

  it("removes a finished worktree, refusing while it holds uncommitted work; the branch stays", async () => {
    const root = twoChanges()
    const agent = agentScript(`import { writeFileSync } from "node:fs"\nwriteFileSync("made.txt", "x\\n")\nconsole.log("<promise>COMPLETE</promise>")`)
    expect((await spool(["ralph", "x", "--change", second, "--worktree", ...harness(agent)], { cwd: root })).code).toBe(0)
    const worktree = worktreeOf(root, second)
    writeFileSync(join(worktree, "draft.txt"), "unsaved\n")

    const refused = await spool(["ralph", "--change", second, "--worktree", "--remove"], { cwd: root })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe(
      `spool: the worktree ${worktree} holds uncommitted work (1 file); commit or discard it there first; nothing was removed\n`
    )
    expect(readFileSync(join(worktree, "draft.txt"), "utf8")).toBe("unsaved\n")

    rmSync(join(worktree, "draft.txt"))
    const removed = await spool(["ralph", "--change", second, "--worktree", "--remove"], { cwd: root })
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout).toContain(`removed the worktree ${worktree}; branch spool/${second} stays`)
    expect(existsSync(worktree)).toBe(false)
    expect(git(root, "show", `spool/${second}:made.txt`)).toBe("x")
  })

  it("says how to repair a worktree deleted by hand, and resumes on its branch afterwards", async () => {
    const root = twoChanges()
    const agent = agentScript(`import { writeFileSync } from "node:fs"\nwriteFileSync("made.txt", "x\\n")\nconsole.log("<promise>COMPLETE</promise>")`)
    expect((await spool(["ralph", "x", "--change", second, "--worktree", ...harness(agent)], { cwd: root })).code).toBe(0)
    rmSync(worktreeOf(root, second), { recursive: true, force: true })

    const refused = await spool(["ralph", "x", "--change", second, "--worktree", ...harness(done)], { cwd: root })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/^spool: the worktree of 001-02_second at .* is gone \(deleted by hand\?\); run git worktree prune to forget it, then start again: branch spool\/001-02_second keeps its commits\n$/)

    git(root, "worktree", "prune")
    const resumed = await spool(["ralph", "x", "--change", second, "--worktree", ...harness(done)], { cwd: root })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(readFileSync(join(worktreeOf(root, second), "made.txt"), "utf8")).toBe("x\n")
  })

  it("refuses bad input with one line: outside a git repository, an uncommitted change, --remove alone", async () => {
    const plain = makeWorkspace({ git: false })
    const outside = await spool(["ralph", "x", "--change", first, "--worktree", ...harness(done)], { cwd: plain })
    expect(outside.code).toBe(2)
    expect(outside.stderr).toMatch(/^spool: --worktree needs a git repository, and .* is not inside one; run git init and commit, or run without --worktree\n$/)
    expect(existsSync(join(plain, ".spool", ".state"))).toBe(false)

    const root = twoChanges()
    addChange(root, "001-03_draft")
    const uncommitted = await spool(["ralph", "x", "--change", "001-03", "--worktree", ...harness(done)], { cwd: root })
    expect(uncommitted.code).toBe(2)
    expect(uncommitted.stderr).toBe(
      "spool: .spool/changes/001-03_draft/proposal.md is not committed in HEAD, and the worktree is a checkout of it; " +
        "commit the change first (git add .spool/changes/001-03_draft && git commit)\n"
    )
    expect(git(root, "branch", "--list", "spool/*")).toBe("")

    const alone = await spool(["ralph", "--change", second, "--remove"], { cwd: root })
    expect(alone.code).toBe(2)
    expect(alone.stderr).toBe("spool: --remove goes with --worktree: spool ralph --change <id> --worktree --remove\n")
  })
})

describe("two loops in one work tree", () => {
  it("refuses a second loop without --worktree (exit 2, nothing written); with --no-commit it warns and runs; with --worktree it runs", async () => {
    const root = twoChanges()
    const release = join(mkdtempSync(join(tmpdir(), "spool-release-")), "go")
    const waiting = agentScript(`
import { existsSync } from "node:fs"
console.log("first loop working")
while (!existsSync(${JSON.stringify(release)})) await new Promise((r) => setTimeout(r, 20))
console.log("<promise>COMPLETE</promise>")`)
    const running = spawnSpool(["ralph", "x", "--change", first, ...harness(waiting)], { cwd: root })
    let out = ""
    running.stdout.on("data", (d) => (out += d))
    const exited = new Promise<number | null>((resolve) => running.on("close", resolve))
    for (let i = 0; i < 3000 && !out.includes("first loop working"); i++) await new Promise((r) => setTimeout(r, 10))
    expect(out).toContain("first loop working")

    const refused = await spool(["ralph", "x", "--change", second, ...harness(done)], { cwd: root })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe(
      `spool: a loop on ${first} (pid ${running.pid}) is running in this work tree, and each loop commits everything that changed there; ` +
        `run this one in a worktree of its own: spool ralph --change ${second} --worktree (or with --no-commit)\n`
    )
    expect(existsSync(stateDir(root, second))).toBe(false)

    const beside = await spool(["ralph", "x", "--change", second, "--no-commit", ...harness(done)], { cwd: root })
    expect(beside.code, beside.stderr).toBe(0)
    expect(beside.stderr).toContain(`warning: a loop on ${first} (pid ${running.pid}) is running in this work tree; this loop commits nothing (--no-commit)`)

    const own = await spool(["ralph", "x", "--change", second, "--worktree", ...harness(done)], { cwd: root })
    expect(own.code, own.stderr).toBe(0)

    writeFileSync(release, "")
    expect(await exited).toBe(0)
    // Once the first loop has ended, the work tree is free again.
    expect((await spool(["ralph", "x", "--change", second, ...harness(done)], { cwd: root })).code).toBe(0)
  })
})
