import { describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative, resolve } from "node:path"

// examples/embed/sweep.ts is a program of its own on spool's application: bundled as a user would
// bundle it, with no module of the CLI in it, it sweeps two changes of a real git repository.

const example = resolve(import.meta.dirname, "..", "..", "..", "examples", "embed", "sweep.ts")

const git = (cwd: string, ...args: Array<string>) => {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
  return result.stdout.trim()
}

/** A git repository on `main` with two changes, each with one open task. */
const repository = () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "spool-embed-")))
  for (const id of ["001-01_hello", "001-02_goodbye"]) {
    mkdirSync(join(root, ".spool", "changes", id), { recursive: true })
    writeFileSync(join(root, ".spool", "changes", id, "proposal.md"), `# ${id}\n\nWrite ${id}.txt.\n`)
    writeFileSync(join(root, ".spool", "changes", id, "tasks.md"), `## 1. Work\n\n- [ ] 1.1 Write ${id}.txt\n`)
  }
  writeFileSync(join(root, "README.md"), "hello\n")
  git(root, "init", "-q", "-b", "main")
  git(root, "config", "user.name", "Test")
  git(root, "config", "user.email", "test@example.invalid")
  git(root, "add", "-A")
  git(root, "commit", "-qm", "initial")
  return root
}

/** An agent that does its change's one task, ticks it, and says it is done. */
const agent = (dir: string) => {
  const file = join(dir, "agent.mjs")
  writeFileSync(file, `
import { readFileSync, writeFileSync } from "node:fs"
const change = process.env.SPOOL_CHANGE
const tasks = ".spool/changes/" + change + "/tasks.md"
writeFileSync(change + ".txt", "done\\n")
writeFileSync(tasks, readFileSync(tasks, "utf8").replace("- [ ]", "- [x]"))
console.log("<promise>COMPLETE</promise>")
`)
  return `${process.execPath} ${file}`
}

describe("examples/embed: a sweep through the application, with no CLI module", () => {
  it("bundles without any module of the CLI and sweeps two changes to completion, each merged into main", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-embed-build-"))
    const outfile = join(dir, "sweep.cjs")
    const { metafile } = await build({ entryPoints: [example], bundle: true, platform: "node", format: "cjs", outfile, metafile: true, logLevel: "silent" })
    const modules = Object.keys(metafile.inputs).map((input) => relative(resolve(import.meta.dirname, "..", "..", ".."), resolve(input)))
    expect(modules.filter((module) => module.startsWith("packages/app/"))).not.toEqual([])
    expect(modules.filter((module) => module.startsWith("packages/cli/") || module.includes("@effect/cli"))).toEqual([])

    const root = repository()
    const run = spawnSync(process.execPath, [outfile, root, agent(dir)], { cwd: root, encoding: "utf8", env: { ...process.env, CI: "true" } })
    expect(run.status, run.stdout + run.stderr).toBe(0)
    expect(run.stdout).toContain("sweeping 2 ready changes, 2 at a time: 001-01_hello, 001-02_goodbye; each merged into main once complete")
    expect(run.stdout).toMatch(/^001-01_hello: merged into main \([0-9a-f]{8}\)$/m)
    expect(run.stdout).toMatch(/^001-02_goodbye: merged into main \([0-9a-f]{8}\)$/m)
    expect(run.stdout).toContain("=== sweep: 2 changes: 2 complete ===")
    // The work is home: both files on main, both tasks ticked, each loop's state complete.
    expect(git(root, "show", "main:001-01_hello.txt")).toBe("done")
    expect(git(root, "show", "main:001-02_goodbye.txt")).toBe("done")
    for (const id of ["001-01_hello", "001-02_goodbye"]) {
      expect(git(root, "show", `main:.spool/changes/${id}/tasks.md`)).toContain(`- [x] 1.1 Write ${id}.txt`)
      const state = JSON.parse(readFileSync(join(root, ".spool", ".state", "ralph", id, "state.json"), "utf8"))
      expect([state.status, state.merge]).toEqual(["complete", { merged: true, text: expect.stringMatching(/^merged into main/) }])
    }
  })
})
