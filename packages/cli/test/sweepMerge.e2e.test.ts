import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { agentScript, git, repositoryOf, spool, startSpool, stateDir } from "./support.js"

// What a --merge sweep could not merge stays with the change: told by the sweep, --status and --list, and merged by the next --merge sweep.

const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]

/** The summary's row of a change: its cells, split on runs of two spaces or more. */
const row = (stdout: string, changeId: string) =>
  stdout.split("\n").find((line) => line.startsWith(`${changeId} `))?.split(/ {2,}/) ?? []

describe("spool ralph --merge: a merge not made (the built binary, scripted agents)", () => {
  it("--merge keeps a merge that was not made with the change: the headline, --status and --list say so, with the merged tree's check output; the next --merge sweep merges it", async () => {
    const root = repositoryOf({ "001-01_a": {}, "001-02_b": {} })
    const dir = mkdtempSync(join(tmpdir(), "spool-merge-check-"))
    const runs = join(dir, "runs")
    const agent = agentScript(`
import { appendFileSync, writeFileSync } from "node:fs"
appendFileSync(${JSON.stringify(runs)}, process.env.SPOOL_CHANGE + "\\n")
writeFileSync(process.env.SPOOL_CHANGE + ".txt", "done\\n")
console.log("<promise>COMPLETE</promise>")
`)
    // Passes in the loops; on the merged tree, b fails it until the fix is there.
    const fixed = join(dir, "fixed")
    writeFileSync(join(dir, "check.sh"), [
      `if [ "$SPOOL_MERGE" = 1 ] && [ "$SPOOL_CHANGE" = 001-02_b ] && [ ! -e ${fixed} ]; then`,
      "  echo \"b's greeting clashes with a's on the merged tree\"",
      "  exit 3",
      "fi",
      ""
    ].join("\n"))
    const check = `sh ${join(dir, "check.sh")}`
    const sweep = () => spool(["ralph", "--continue-ready", "--merge", "--verify", check, ...harness(agent)], { cwd: root })
    const first = await sweep()
    expect(first.code, first.stderr).toBe(1)
    const reason = `not merged: ${check} failed on the merged tree`
    expect(first.stdout).toContain("=== sweep: 2 changes: 1 complete, 1 not merged ===")
    expect(row(first.stdout, "001-02_b").slice(0, 2)).toEqual(["001-02_b", "complete"])
    expect(row(first.stdout, "001-02_b")[7]).toBe(reason)
    expect(first.stdout).toMatch(new RegExp(`^why:\\n {2}001-02_b: ${reason.replace(/[.$/]/g, "\\$&")}$`, "m"))
    // What the check printed on the merged tree reaches the person.
    expect(first.stdout).toMatch(new RegExp(`^001-02_b: ${check.replace(/[.$/]/g, "\\$&")} on the merged tree: exit 3, \\S+; its output:\\nb's greeting clashes with a's on the merged tree$`, "m"))
    expect(git(root, "log", "--format=%s", "main").split("\n")).toEqual(["spool ralph: 001-01_a iteration 1", "initial"])

    // --status, --status --json, --list and --list --json remember it.
    const status = (await spool(["ralph", "--status"], { cwd: root })).stdout
    expect(status).toMatch(new RegExp(`^001-02_b\\s+complete, not merged: sh \\S+ failed on the merged tree\\s+1 of 20`, "m"))
    expect(status).toMatch(/^001-01_a\s+complete\s+1 of 20/m)
    expect((await spool(["ralph", "--status", "--change", "001-02"], { cwd: root })).stdout).toContain(`status:    complete, ${reason}\n`)
    const json = JSON.parse((await spool(["ralph", "--status", "--json"], { cwd: root })).stdout)
    expect(json.map((c: { changeId: string; status: string; merge: unknown }) => [c.changeId, c.status, c.merge])).toEqual([
      ["001-01_a", "complete", { merged: true, text: expect.stringMatching(/^merged into main \([0-9a-f]{8}\)$/) }],
      ["001-02_b", "complete", { merged: false, text: reason }]
    ])
    const list = (await spool(["ralph", "--list"], { cwd: root })).stdout
    expect(list).toMatch(new RegExp(`^001-02_b  complete, ${reason.replace(/[.$/]/g, "\\$&")}$`, "m"))
    expect(list).toMatch(/^001-01_a  complete\s+its loop completed$/m)
    const listed = JSON.parse((await spool(["ralph", "--list", "--json"], { cwd: root })).stdout)
    expect(listed[1]).toMatchObject({ id: "001-02_b", ready: false, state: "complete", why: reason, merge: { merged: false, text: reason } })

    // Once the fix is there, the next --merge sweep merges it, without running its loop again.
    writeFileSync(fixed, "")
    const second = await sweep()
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toContain("sweeping 0 ready changes; merging again, complete but not merged: 001-02_b; each merged into main once complete")
    expect(second.stdout).toContain("=== sweep: 2 changes: 2 already complete ===")
    expect(row(second.stdout, "001-02_b").slice(0, 2)).toEqual(["001-02_b", "already complete"])
    expect(row(second.stdout, "001-02_b")[5]).toBe("spool/001-02_b")
    expect(row(second.stdout, "001-02_b")[7]).toMatch(/^merged into main \([0-9a-f]{8}\)$/)
    expect(row(second.stdout, "001-01_a")[7]).toBe("-")
    expect(readFileSync(runs, "utf8")).toBe("001-01_a\n001-02_b\n")
    expect(readFileSync(join(root, "001-02_b.txt"), "utf8")).toBe("done\n")
    expect((await spool(["ralph", "--status", "--change", "001-02"], { cwd: root })).stdout).toContain("status:    complete\n")
    expect((await spool(["ralph", "--list"], { cwd: root })).stdout).toMatch(/^001-02_b  complete\s+its loop completed$/m)
  })

  it("--merge: a change whose merge Ctrl-C cut short stays not merged, and the next --merge sweep merges it; exit 130, then 0", async () => {
    const root = repositoryOf({ "001-01_a": {} })
    const dir = mkdtempSync(join(tmpdir(), "spool-merge-cut-"))
    const agent = agentScript(`
import { writeFileSync } from "node:fs"
writeFileSync("a.txt", "a\\n")
console.log("<promise>COMPLETE</promise>")
`)
    // The first merged tree's check hangs until it is stopped; the next passes.
    writeFileSync(join(dir, "check.sh"), [
      `if [ "$SPOOL_MERGE" = 1 ] && [ ! -e ${join(dir, "started")} ]; then`,
      `  touch ${join(dir, "started")}`,
      "  while :; do sleep 1; done",
      "fi",
      ""
    ].join("\n"))
    const args = ["ralph", "--continue-ready", "--merge", "--verify", `sh ${join(dir, "check.sh")}`, ...harness(agent)]
    const cut = startSpool(args, root)
    for (let i = 0; i < 6000 && !existsSync(join(dir, "started")); i++) await new Promise((r) => setTimeout(r, 20))
    cut.child.kill("SIGINT")
    expect((await cut.done).code).toBe(130)
    expect(row(cut.output(), "001-01_a")[7]).toBe("not merged: interrupted while merging")
    const state = JSON.parse(readFileSync(join(stateDir(root, "001-01_a"), "state.json"), "utf8"))
    expect([state.status, state.merge]).toEqual(["complete", { merged: false, text: "not merged: the sweep ended before its merge" }])
    expect(git(root, "log", "--format=%s", "main")).toBe("initial")

    const again = await spool(args, { cwd: root })
    expect(again.code, again.stderr).toBe(0)
    expect(row(again.stdout, "001-01_a")[7]).toMatch(/^merged into main \([0-9a-f]{8}\)$/)
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n")
    expect(JSON.parse(readFileSync(join(stateDir(root, "001-01_a"), "state.json"), "utf8")).merge.merged).toBe(true)
  })
})
