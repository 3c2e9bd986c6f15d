import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync, realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { agentScript, git, remoteOf, repositoryOf, spool } from "./support.js"

// A person before a merge: a --merge --approve sweep leaves completed changes waiting (exit 7);
// --approve has the next sweep merge one without running it, --reject runs it again with the why.

const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]

/** The summary's row of a change: its cells, split on runs of two spaces or more. */
const row = (stdout: string, changeId: string) =>
  stdout.split("\n").find((line) => line.startsWith(`${changeId} `))?.split(/ {2,}/) ?? []

/** An agent that notes each change it runs and the prompt it was given, does its work and claims completion. */
const recordingAgent = (dir: string) =>
  agentScript(`
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
appendFileSync(${JSON.stringify(join(dir, "runs"))}, process.env.SPOOL_CHANGE + "\\n")
writeFileSync(${JSON.stringify(dir)} + "/prompt-" + process.env.SPOOL_CHANGE, readFileSync(0, "utf8"))
writeFileSync(process.env.SPOOL_CHANGE + ".txt", "done\\n")
console.log("<promise>COMPLETE</promise>")
`)

const runs = (dir: string) => readFileSync(join(dir, "runs"), "utf8").split("\n").filter(Boolean)

describe("spool ralph --merge --approve (the built binary, scripted agents)", () => {
  it("completed changes wait for a person; --approve merges one without running it, --reject runs the other with the why in its prompt", async () => {
    const root = repositoryOf({ "001-01_a": {}, "001-02_b": {} })
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "spool-approve-")))
    const notices = join(dir, "notices.jsonl")
    const sweep = (...more: Array<string>) =>
      spool(["ralph", "--continue-ready", "--merge", "--approve", ...more, ...harness(recordingAgent(dir))], { cwd: root })

    const first = await sweep("--notify", `cat >> ${notices}; echo >> ${notices}`)
    expect(first.code, first.stderr).toBe(7)
    expect(first.stdout).toContain("; each merged into main once complete and approved (spool ralph --approve <change>)")
    expect(first.stdout).toContain("=== sweep: 2 changes: 2 awaiting approval ===")
    expect(row(first.stdout, "001-01_a")[7]).toBe("awaiting approval")
    expect(first.stdout).toContain("  001-02_b: awaiting approval: spool ralph --approve 001-02_b, or --reject 001-02_b \"<why>\"")
    expect(git(root, "log", "--format=%s", "main")).toBe("initial")
    const told = readFileSync(notices, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line))
    expect(told.filter((n) => n.event === "awaiting-approval").map((n) => n.change)).toEqual(["001-01_a", "001-02_b"])
    expect(told.at(-1)).toMatchObject({ event: "sweep-ended", outcome: "awaiting-approval" })

    expect((await spool(["ralph", "--status"], { cwd: root })).stdout).toMatch(/^001-02_b\s+complete, awaiting approval\s+1 of 20/m)
    expect((await spool(["ralph", "--list"], { cwd: root })).stdout).toMatch(/^001-01_a {2}complete, awaiting approval$/m)
    const listed = JSON.parse((await spool(["ralph", "--list", "--json"], { cwd: root })).stdout)
    expect(listed.map((c: { id: string; ready: boolean; approval: string }) => [c.id, c.ready, c.approval])).toEqual([
      ["001-01_a", false, "awaiting"],
      ["001-02_b", false, "awaiting"]
    ])
    const status = JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)
    expect(status.approval).toMatchObject({ decision: "awaiting", run: status.run })

    const approved = await spool(["ralph", "--approve", "001-01"], { cwd: root })
    expect([approved.code, approved.stdout.trim()]).toEqual([0, "approved 001-01_a: the next spool ralph --continue-ready --merge merges it without running it again"])
    const rejected = await spool(["ralph", "--reject", "001-02", "say hello, not hi"], { cwd: root })
    expect([rejected.code, rejected.stdout.trim()]).toEqual([0, "rejected 001-02_b: its context has the reason, and the next sweep runs it again"])
    expect((await spool(["ralph", "--list", "--json"], { cwd: root })).stdout).toMatch(/"id": "001-02_b",\s+"ready": true/)

    const second = await sweep()
    expect(second.stdout).toContain("sweeping 1 ready change: 001-02_b; merging again, complete but not merged: 001-01_a;")
    expect(runs(dir)).toEqual(["001-01_a", "001-02_b", "001-02_b"])
    expect(readFileSync(join(dir, "prompt-001-02_b"), "utf8")).toContain("A person reviewed the completed work and rejected its merge: say hello, not hi")
    expect(row(second.stdout, "001-01_a").slice(0, 2)).toEqual(["001-01_a", "already complete"])
    expect(row(second.stdout, "001-01_a")[7]).toMatch(/^merged into main \([0-9a-f]{8}\)$/)
    expect(git(root, "log", "--format=%s", "main").split("\n")).toEqual(["spool ralph: 001-01_a iteration 1", "initial"])
    // Run again, the rejected change waits for a person once more.
    expect(row(second.stdout, "001-02_b")[7]).toBe("awaiting approval")
    expect(second.code, second.stderr).toBe(7)
  })

  it("with --remote, an approval given in one clone is seen by the sweep in another, which merges without running the change", async () => {
    const { base, bare, clone } = remoteOf({ "001-01_a": {} })
    const here = clone("here")
    const there = clone("there")
    const sweep = () =>
      spool(["ralph", "--continue-ready", "--merge", "--approve", "--remote", "origin", ...harness(recordingAgent(base))], { cwd: here })

    const first = await sweep()
    expect(first.code, first.stderr).toBe(7)
    expect(row(first.stdout, "001-01_a")[7]).toBe("awaiting approval")
    expect(git(bare, "for-each-ref", "--format=%(refname)", "refs/spool/approval/")).toBe("refs/spool/approval/001-01_a")

    // The other clone sees it waiting, and approves it on the remote.
    expect((await spool(["ralph", "--list", "--remote", "origin"], { cwd: there })).stdout).toMatch(/^001-01_a {2}complete, awaiting approval$/m)
    const approved = await spool(["ralph", "--approve", "001-01", "--remote", "origin"], { cwd: there })
    expect([approved.code, approved.stderr]).toEqual([0, ""])
    expect(approved.stdout).toContain("approved 001-01_a on origin")
    expect(existsSync(join(there, "001-01_a.txt"))).toBe(false)

    const second = await sweep()
    expect(second.code, second.stderr).toBe(0)
    expect(row(second.stdout, "001-01_a")[7]).toMatch(/^merged into main \([0-9a-f]{8}\)$/)
    expect(runs(base)).toEqual(["001-01_a"])
    expect(readFileSync(join(here, "001-01_a.txt"), "utf8")).toBe("done\n")
    expect(git(bare, "for-each-ref", "--format=%(refname)", "refs/spool/approval/")).toBe("")
  })
})
