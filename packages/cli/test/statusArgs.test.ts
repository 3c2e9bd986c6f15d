import { describe, expect, it } from "@effect/vitest"
import { parseStatusArgs } from "../src/StatusArgs.js"
import { addChange, makeWorkspace, spool } from "./support.js"

describe("the --status shortcut", () => {
  it("takes only plain status requests", () => {
    expect(parseStatusArgs(["ralph", "--status"])).toEqual({ change: null, json: false })
    expect(parseStatusArgs(["loop", "--json", "--status", "-c", "002"])).toEqual({ change: "002", json: true })
    expect(parseStatusArgs(["ralph", "--status", "--change=002-01_x"])).toEqual({ change: "002-01_x", json: false })
    for (const argv of [
      ["ralph"],
      ["ralph", "--json"],
      ["status", "--status"],
      ["ralph", "--status", "--status"],
      ["ralph", "--status", "--change"],
      ["ralph", "--status", "--change", "--json"],
      ["ralph", "--status", "--change", "a", "--change", "b"],
      ["ralph", "--status", "--module", "002"],
      ["ralph", "--status", "--clear-context"],
      ["ralph", "--status", "prompt words"],
      ["ralph", "--status", "--help"]
    ]) expect(parseStatusArgs(argv), argv.join(" ")).toBeNull()
  })

  it("prints exactly what the full command line prints, answers and errors alike", async () => {
    const root = makeWorkspace()
    await spool(["ralph", "x", "--change", "001-01", "--harness", "command", "--harness-command", "node -e 0", "--max-iterations", "2", "--no-interactive"], { cwd: root })
    // `--module` sends the same request through the full parser.
    for (const [shortcut, full] of [
      [["ralph", "--status", "--change", "001-01"], ["ralph", "--status", "--change", "001-01", "--module", "001"]],
      [["ralph", "--status", "--json", "-c", "001-01"], ["ralph", "--status", "--json", "-c", "001-01", "-m", "001"]],
      [["ralph", "--status", "--change", "009"], ["ralph", "--status", "--change", "009", "--module", "009"]]
    ] as const) {
      const a = await spool(shortcut, { cwd: root })
      const b = await spool(full, { cwd: root })
      expect([a.code, a.stdout, a.stderr]).toEqual([b.code, b.stdout, b.stderr])
    }
    const statusOnly = await spool(["ralph", "--status"], { cwd: root })
    expect(statusOnly.code).toBe(0)
    expect(statusOnly.stdout).toContain("iteration: 2 of at most 2 (at least 1)")
    // Every loop of the repository, without a change: `--no-interactive` sends it through the full parser.
    addChange(root, "001-02_second")
    await spool(["ralph", "x", "--change", "001-02", "--harness", "command", "--harness-command", "node -e 0", "--max-iterations", "1", "--no-interactive"], { cwd: root })
    for (const args of [["ralph", "--status"], ["ralph", "--status", "--json"]]) {
      const a = await spool(args, { cwd: root })
      const b = await spool([...args, "--no-interactive"], { cwd: root })
      expect([a.code, a.stdout, a.stderr]).toEqual([b.code, b.stdout, b.stderr])
    }
    expect((await spool(["ralph", "--status"], { cwd: root })).stdout).toMatch(/^001-02_second {2,}max-iterations {2,}1 of 1 /m)
  })
})
