import { describe, expect, it } from "@effect/vitest"
import { mkdirSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { addChange, agentScript, git, makeWorkspace, spool, stateDir } from "./support.js"

// `spool ralph --status` without `--change`: every loop of the repository, a line each.

const first = "001-01_greeting-cli"
const second = "001-02_second"
const third = "001-03_third"
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]
const done = agentScript("console.log('<promise>COMPLETE</promise>')")
const idle = agentScript("console.log('working')")

const status = async (cwd: string, ...args: Array<string>) => {
  const result = await spool(["ralph", "--status", ...args], { cwd })
  expect(result.code, result.stderr).toBe(0)
  expect(result.stderr).toBe("")
  return result.stdout
}

/** The example workspace with more changes, all committed, in a repository whose path has no symlinks. */
const changes = (...ids: Array<string>) => {
  const root = realpathSync(makeWorkspace())
  for (const id of ids) addChange(root, id)
  git(root, "add", "-A")
  git(root, "commit", "-qm", "more changes")
  return root
}

/** A state a run left, as its file holds it: spend counted by its guards, and no iteration recorded. */
const writeState = (root: string, changeId: string) => {
  mkdirSync(stateDir(root, changeId), { recursive: true })
  writeFileSync(join(stateDir(root, changeId), "state.json"), JSON.stringify({
    changeId,
    run: "20261101T100000Z-k3f9",
    status: "stopped",
    iteration: 7,
    minIterations: 1,
    maxIterations: 30,
    startedAt: "2026-11-01T10:00:00.000Z",
    updatedAt: "2026-11-01T11:00:00.000Z",
    pid: 1,
    stopReason: "max-cost",
    stopMessage: "stopped: --max-cost $0.40 reached",
    resumeAt: null,
    guards: {
      maxCostUsd: 0.4, maxTokens: null, maxDurationMs: null, stallIterations: 5, maxConsecutiveFailures: 5, maxLimitWaitMs: 0,
      costUsd: 0.42, tokens: 15200, stalledIterations: 0, consecutiveFailures: 0
    }
  }))
}

describe("spool ralph --status without --change", () => {
  it("says in one line that no loop has run, and how to start one; --json prints an empty list", async () => {
    const root = makeWorkspace()
    // Context added before any loop is no loop.
    expect((await spool(["ralph", "--change", "001-01", "--add-context", "be brief"], { cwd: root })).code).toBe(0)
    for (const args of [[], ["--no-interactive"]]) {
      expect(await status(root, ...args)).toBe("no loop has run in this repository yet; start one with: spool ralph --change <id>\n")
      expect(JSON.parse(await status(root, "--json", ...args))).toEqual([])
    }
  })

  it("lists every change with loop state, in the main work tree and in worktrees: status, iteration, spend, last outcome, branch", async () => {
    const root = changes(second, third)
    const inMain = await spool(["ralph", "x", "--change", first, "--max-iterations", "2", ...harness(idle)], { cwd: root })
    expect(inMain.code, inMain.stderr).toBe(3)
    const inWorktree = await spool(["ralph", "x", "--change", second, "--worktree", ...harness(done)], { cwd: root })
    expect(inWorktree.code, inWorktree.stderr).toBe(0)
    writeState(root, third)

    const lines = (await status(root)).trimEnd().split("\n")
    expect(lines.map((line) => line.split(/ {2,}/))).toEqual([
      ["change", "status", "iteration", "spend", "last outcome", "branch"],
      [first, "max-iterations", "2 of 2", "-", "continue"],
      [second, "complete", "1 of 20", "-", "complete", `spool/${second}`],
      [third, "stopped", "7 of 30", "$0.42 · 15200 tokens", "-"],
      ["one change in full: spool ralph --status --change <id>"]
    ])
    // The columns line up.
    expect(new Set(lines.slice(0, 4).map((line) => line.indexOf(line.split(/ {2,}/)[2]!))).size).toBe(1)

    // --json: the objects `--status --json --change` prints, one per change, in change-id order.
    const all = JSON.parse(await status(root, "--json"))
    const one = await Promise.all([first, second, third].map(async (id) => JSON.parse(await status(root, "--json", "--change", id))))
    expect(all).toEqual(one)
    expect(all.map((s: { changeId: string; branch: string | null }) => [s.changeId, s.branch])).toEqual([
      [first, null],
      [second, `spool/${second}`],
      [third, null]
    ])

    // Inside a change's worktree, --status is about that change.
    const inside = join(root, ".spool", ".state", "worktrees", second)
    expect(await status(inside)).toContain(`change:    ${second}\nstatus:    complete`)
    expect(JSON.parse(await status(inside, "--json")).changeId).toBe(second)
  })

  it("shows the one change with loop state in full, and --json lists it alone", async () => {
    const root = changes(second)
    expect((await spool(["ralph", "x", "--change", second, ...harness(done)], { cwd: root })).code).toBe(0)
    const text = await status(root)
    expect(text).toContain(`change:    ${second}\nstatus:    complete\niteration: 1 of at most 20 (at least 1)`)
    expect(text).toContain("recent iterations (last 1):")
    const json = JSON.parse(await status(root, "--json"))
    expect(json).toEqual([JSON.parse(await status(root, "--json", "--change", second))])
  })
})
