import { describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { agentScript, git, remoteOf, spool } from "./support.js"

// A person's word on a merge kept on the remote: a rejection given in one clone runs the change
// again in another with the why in its prompt; an approval merges in a clone that never ran it.

const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]

/** The summary's row of a change: its cells, split on runs of two spaces or more. */
const row = (stdout: string, changeId: string) =>
  stdout.split("\n").find((line) => line.startsWith(`${changeId} `))?.split(/ {2,}/) ?? []

/** An agent that notes each change it runs and the prompt it was given (numbered), does its work and claims completion. */
const recordingAgent = (dir: string) =>
  agentScript(`
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
const runs = ${JSON.stringify(join(dir, "runs"))}
appendFileSync(runs, process.env.SPOOL_CHANGE + "\\n")
const n = readFileSync(runs, "utf8").split("\\n").filter(Boolean).length
writeFileSync(${JSON.stringify(dir)} + "/prompt-" + n, readFileSync(0, "utf8"))
writeFileSync(process.env.SPOOL_CHANGE + ".txt", "done " + n + "\\n")
console.log("<promise>COMPLETE</promise>")
`)

const runs = (dir: string) => existsSync(join(dir, "runs")) ? readFileSync(join(dir, "runs"), "utf8").split("\n").filter(Boolean) : []


/** The approval ref of `changeId` on the bare remote: the decoded note its commit's message is, or null without one. */
const approvalRef = (bare: string, changeId: string) => {
  const refs = git(bare, "for-each-ref", "--format=%(refname)", "refs/spool/approval/")
  if (refs === "") return null
  expect(refs).toBe(`refs/spool/approval/${changeId}`)
  // A commit of no files: the empty tree.
  expect(git(bare, "rev-parse", `refs/spool/approval/${changeId}^{tree}`)).toBe(git(bare, "hash-object", "-t", "tree", "/dev/null"))
  return JSON.parse(git(bare, "log", "-1", "--format=%B", `refs/spool/approval/${changeId}`)) as { decision: string; run: string; why?: string }
}

/** The run id of the change's last loop as the remote has it. */
const remoteRun = async (cwd: string) =>
  JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01", "--remote", "origin"], { cwd })).stdout).run as string

describe("spool ralph --approve/--reject with --remote (the built binary, scripted agents, a bare remote)", () => {
  it("a rejection given in another clone runs the change again in the sweep's clone, with the why in its prompt", async () => {
    const { bare, base, clone } = remoteOf({ "001-01_a": {} })
    const here = clone("here")
    const there = clone("there")
    const sweep = (cwd: string) =>
      spool(["ralph", "--continue-ready", "--merge", "--approve", "--remote", "origin", ...harness(recordingAgent(base))], { cwd })

    const first = await sweep(here)
    expect(first.code, first.stderr).toBe(7)
    expect(row(first.stdout, "001-01_a")[7]).toBe("awaiting approval")
    const firstRun = await remoteRun(there)
    expect(approvalRef(bare, "001-01_a")).toMatchObject({ decision: "awaiting", run: firstRun })

    const rejected = await spool(["ralph", "--reject", "001-01", "say hello, not hi", "--remote", "origin"], { cwd: there })
    expect([rejected.code, rejected.stderr, rejected.stdout.trim()]).toEqual([
      0,
      "",
      "rejected 001-01_a on origin: its context has the reason, and the next sweep runs it again"
    ])
    // The word replaces the one there: the decision, its run, and the why.
    expect(approvalRef(bare, "001-01_a")).toMatchObject({ decision: "rejected", run: firstRun, why: "say hello, not hi" })
    const listed = JSON.parse((await spool(["ralph", "--list", "--json", "--remote", "origin"], { cwd: here })).stdout)
    expect(listed.map((c: { id: string; ready: boolean; approval: string }) => [c.id, c.ready, c.approval])).toEqual([["001-01_a", true, "rejected"]])
    // Deciding again on a change no longer awaiting approval is refused.
    const again = await spool(["ralph", "--approve", "001-01", "--remote", "origin"], { cwd: there })
    expect(again.code).toBe(2)
    expect(again.stderr).toContain("it was rejected; the next sweep runs it again")

    const second = await sweep(here)
    expect(second.code, second.stderr).toBe(7)
    expect(second.stdout).toContain("sweeping 1 ready change: 001-01_a;")
    expect(runs(base)).toEqual(["001-01_a", "001-01_a"])
    expect(readFileSync(join(base, "prompt-1"), "utf8")).not.toContain("rejected its merge")
    expect(readFileSync(join(base, "prompt-2"), "utf8")).toContain("A person reviewed the completed work and rejected its merge: say hello, not hi")
    expect(row(second.stdout, "001-01_a")[7]).toBe("awaiting approval")
    // The new run waits: the ref is its word now, and the remote's context keeps the why.
    const secondRun = await remoteRun(there)
    expect(secondRun).not.toBe(firstRun)
    expect(approvalRef(bare, "001-01_a")).toMatchObject({ decision: "awaiting", run: secondRun })
    expect(approvalRef(bare, "001-01_a")?.why).toBeUndefined()
    expect(git(bare, "show", "refs/spool/state/001-01_a:context.txt")).toContain("rejected its merge: say hello, not hi")
    expect(git(here, "log", "--format=%s", "main")).toBe("initial")
  })

  it("a rejected change run again by a --merge sweep in a third clone, without --approve, is merged there, and its word leaves the remote", async () => {
    const { bare, base, clone } = remoteOf({ "001-01_a": {} })
    const agent = recordingAgent(base)
    const first = await spool(["ralph", "--continue-ready", "--merge", "--approve", "--remote", "origin", ...harness(agent)], { cwd: clone("here") })
    expect(first.code, first.stderr).toBe(7)
    const rejected = await spool(["ralph", "--reject", "001-01", "say hello, not hi", "--remote", "origin"], { cwd: clone("there") })
    expect([rejected.code, rejected.stderr]).toEqual([0, ""])
    expect(approvalRef(bare, "001-01_a")).toMatchObject({ decision: "rejected", why: "say hello, not hi" })

    const third = clone("third")
    const second = await spool(["ralph", "--continue-ready", "--merge", "--remote", "origin", ...harness(agent)], { cwd: third })
    expect(second.code, second.stderr).toBe(0)
    expect(runs(base)).toEqual(["001-01_a", "001-01_a"])
    // The loop brought the branch and state from the remote (a new run, on the first one's commit), and the why reached its prompt.
    expect(readFileSync(join(base, "prompt-2"), "utf8")).toContain("A person reviewed the completed work and rejected its merge: say hello, not hi")
    expect(row(second.stdout, "001-01_a")[7]).toMatch(/^merged into main \([0-9a-f]{8}\)$/)
    expect(git(third, "log", "--format=%s", "main").split("\n")).toEqual(["spool ralph: 001-01_a iteration 1", "spool ralph: 001-01_a iteration 1", "initial"])
    expect(readFileSync(join(third, "001-01_a.txt"), "utf8")).toBe("done 2\n")
    // Merged: the rejection has done its part, and goes as an approval does.
    expect(approvalRef(bare, "001-01_a")).toBeNull()
  })

  it("an approval given in another clone is merged by a sweep in a fresh clone that never ran the change, without running it", async () => {
    const { bare, base, clone } = remoteOf({ "001-01_a": {} })
    const here = clone("here")
    const sweep = (cwd: string) =>
      spool(["ralph", "--continue-ready", "--merge", "--approve", "--remote", "origin", ...harness(recordingAgent(base))], { cwd })

    const first = await sweep(here)
    expect(first.code, first.stderr).toBe(7)
    expect(runs(base)).toEqual(["001-01_a"])
    const there = clone("there")
    const approved = await spool(["ralph", "--approve", "001-01", "--remote", "origin"], { cwd: there })
    expect([approved.code, approved.stderr]).toEqual([0, ""])
    expect(approvalRef(bare, "001-01_a")).toMatchObject({ decision: "approved" })

    const fresh = clone("fresh")
    expect(git(fresh, "branch", "--list", "spool/001-01_a")).toBe("")
    const second = await sweep(fresh)
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toContain("sweeping 0 ready changes; merging again, complete but not merged: 001-01_a;")
    expect(row(second.stdout, "001-01_a").slice(0, 2)).toEqual(["001-01_a", "already complete"])
    expect(row(second.stdout, "001-01_a")[7]).toMatch(/^merged into main \([0-9a-f]{8}\)$/)
    expect(runs(base)).toEqual(["001-01_a"])
    // The work is on main here, in the work tree too; the branch is on the remote's commit.
    expect(git(fresh, "log", "--format=%s", "main").split("\n")).toEqual(["spool ralph: 001-01_a iteration 1", "initial"])
    expect(readFileSync(join(fresh, "001-01_a.txt"), "utf8")).toBe("done 1\n")
    expect(git(fresh, "rev-parse", "spool/001-01_a")).toBe(git(bare, "rev-parse", "spool/001-01_a"))
    expect(approvalRef(bare, "001-01_a")).toBeNull()
    // A sweep merges into the branch checked out here; the remote's main is the person's to push.
    expect(git(bare, "log", "--format=%s", "main")).toBe("initial")
    const status = JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: fresh })).stdout)
    expect(status.merge).toMatchObject({ merged: true })
  })
})
