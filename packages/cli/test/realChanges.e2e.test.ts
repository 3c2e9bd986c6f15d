import { describe, expect, it } from "@effect/vitest"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { commitAll, spool } from "./support.js"

// Four active changes of the withakay/spool repository (origin in fixtures/spool-changes/README.md),
// with the progress that repository's own task parser reads in each, worked out by reading them.
const here = dirname(fileURLToPath(import.meta.url))
const proposals = join(here, "fixtures", "spool-changes")
const taskLists = join(here, "..", "..", "core", "test", "fixtures", "tasks")
const changes = [
  // A legend section after 36 finished tasks: not a 37th, open task.
  ["005-13_agent-model-manager", "36/36 complete"],
  // One task `[ ] in-progress`, three pending, a legend.
  ["003-02_crate-code-quality-audit", "8/12 complete"],
  // The checkpoint wave's task is shelved.
  ["008-02_sqlite-validation-for-enhanced-tasks", "7/8 complete, 1 shelved"],
  // A checkbox list with a fenced code block.
  ["005-09_homebrew-release", "26/29 complete"]
] as const

const realRepository = () => {
  const root = mkdtempSync(join(tmpdir(), "spool-real-"))
  for (const [id] of changes) {
    const dir = join(root, ".spool", "changes", id)
    mkdirSync(dir, { recursive: true })
    copyFileSync(join(proposals, id, "proposal.md"), join(dir, "proposal.md"))
    copyFileSync(join(taskLists, `${id}.md`), join(dir, "tasks.md"))
  }
  commitAll(root)
  return root
}

describe("changes as a real spool repository holds them", () => {
  it("--status shows each change's progress as the repository's own tools count it, before any loop has run", async () => {
    const root = realRepository()
    for (const [id, progress] of changes) {
      const status = await spool(["ralph", "--status", "--change", id], { cwd: root })
      expect([status.code, status.stderr]).toEqual([0, ""])
      expect(status.stdout).toContain("status:    no loop has run for this change yet")
      expect(status.stdout.match(/^tasks: .*$/gm)).toEqual([`tasks:     ${progress}`])
    }
  })

  it("gives the agent the real current task, and no task at all once every task is done", async () => {
    const root = realRepository()
    const agent = join(mkdtempSync(join(tmpdir(), "spool-agent-")), "agent.mjs")
    const prompt = join(dirname(agent), "prompt.txt")
    writeFileSync(agent, `import { readFileSync, writeFileSync } from "node:fs"\nwriteFileSync(${JSON.stringify(prompt)}, readFileSync(0, "utf8"))\n`)
    const run = async (id: string) => {
      const result = await spool(["ralph", "Do the next task.", "--change", id, "--harness", "command", "--harness-command", `node ${agent}`, "--max-iterations", "1", "--no-interactive"], { cwd: root })
      expect(result.code, result.stderr).toBe(3)
      return readFileSync(prompt, "utf8")
    }
    const open = await run("003-02_crate-code-quality-audit")
    expect(open).toContain("Progress: 8/12 complete")
    expect(open).toContain("Current task: 5.1: Simplify and test spool-core")
    const done = await run("005-13_agent-model-manager")
    expect(done).toContain("Progress: 36/36 complete")
    expect(done).toContain("Every task is complete or shelved")
    expect(done).not.toContain("Current task:")
  })
})
