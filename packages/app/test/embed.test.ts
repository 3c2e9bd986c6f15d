import { describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative, resolve } from "node:path"
import { finishingAgent, git, repository } from "./repository.js"

// examples/embed/sweep.ts is a program of its own on spool's application: bundled as a user would
// bundle it, with no module of the CLI in it, it sweeps two changes of a real git repository.

const example = resolve(import.meta.dirname, "..", "..", "..", "examples", "embed", "sweep.ts")

describe("examples/embed: a sweep through the application, with no CLI module", () => {
  it("bundles without any module of the CLI and sweeps two changes to completion, each merged into main", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-embed-build-"))
    const outfile = join(dir, "sweep.cjs")
    const { metafile } = await build({ entryPoints: [example], bundle: true, platform: "node", format: "cjs", outfile, metafile: true, logLevel: "silent" })
    const modules = Object.keys(metafile.inputs).map((input) => relative(resolve(import.meta.dirname, "..", "..", ".."), resolve(input)))
    expect(modules.filter((module) => module.startsWith("packages/app/"))).not.toEqual([])
    expect(modules.filter((module) => module.startsWith("packages/cli/") || module.includes("@effect/cli"))).toEqual([])

    const root = repository(["001-01_hello", "001-02_goodbye"])
    const run = spawnSync(process.execPath, [outfile, root, finishingAgent()], { cwd: root, encoding: "utf8", env: { ...process.env, CI: "true" } })
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
