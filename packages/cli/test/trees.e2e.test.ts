import { describe, expect, it } from "@effect/vitest"
import { parseOpenSpecTasks } from "@spool/core"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { commitAll, git, runProgram, spool } from "./support.js"

// Copies of a few changes of real repositories, one per tree (origins and licences beside each in
// fixtures/trees/), run through the built binary with a tree-aware scripted agent.
const here = dirname(fileURLToPath(import.meta.url))
const fixtures = join(here, "fixtures", "trees")
const treeAgent = join(here, "fixtures", "tree-agent.mjs")
const openspecBin = join(here, "..", "node_modules", ".bin", "openspec")

/** A git repository holding a copy of the fixture `<tree>/<repo>`. */
const copyOf = (tree: string, repo: string) => {
  const dir = mkdtempSync(join(tmpdir(), `spool-${tree}-`))
  cpSync(join(fixtures, tree, repo, "repo"), dir, { recursive: true })
  commitAll(dir)
  return dir
}

/** The real `openspec` (pinned), told to keep to itself: no telemetry, its own config in a home of its own. */
const openspecHome = mkdtempSync(join(tmpdir(), "spool-openspec-home-"))
const openspec = async (cwd: string, ...args: Array<string>) => {
  const result = await runProgram(openspecBin, args, {
    cwd,
    env: { ...process.env, OPENSPEC_TELEMETRY: "0", DO_NOT_TRACK: "1", NO_COLOR: "1", HOME: openspecHome, XDG_CONFIG_HOME: openspecHome, XDG_DATA_HOME: openspecHome }
  })
  return { ...result, json: () => JSON.parse(result.stdout) as unknown }
}

/** What `openspec list --json` and `openspec validate --all --json` say, without their clocks (modification times, durations, and the order by recency). */
const openspecReports = async (cwd: string) => {
  const list = (await openspec(cwd, "list", "--json")).json() as { changes: Array<Record<string, unknown>> }
  const validated = (await openspec(cwd, "validate", "--all", "--json")).json() as { items: Array<Record<string, unknown>>; summary: unknown }
  return {
    list: list.changes.map(({ lastModified: _, ...change }) => change).sort((a, b) => String(a["name"]).localeCompare(String(b["name"]))),
    validate: { items: validated.items.map(({ durationMs: _, ...item }) => item), summary: validated.summary }
  }
}

/** Runs a loop with the tree agent; `prompts` keeps every prompt it was given. */
const loop = async (root: string, changes: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const prompts = mkdtempSync(join(tmpdir(), "spool-prompts-"))
  const result = await spool(["ralph", ...args, "--harness", "command", "--harness-command", `node ${treeAgent}`, "--no-stream"], {
    cwd: root,
    env: { TREE_AGENT_CHANGES: changes, TREE_AGENT_PROMPTS: prompts, ...env }
  })
  return { ...result, prompt: (change: string, iteration: number) => readFileSync(join(prompts, `${change}-${iteration}.md`), "utf8") }
}

const listJson = async (root: string, ...args: Array<string>) => {
  const listed = await spool(["ralph", "--list", "--json", ...args], { cwd: root })
  expect([listed.code, listed.stderr]).toEqual([0, ""])
  return JSON.parse(listed.stdout) as Array<{ id: string; state: string; ready: boolean; why: string | null; tasks: { done: number; shelved: number; total: number } | null }>
}

describe("an OpenSpec repository (Fission-AI/OpenSpec's own openspec/)", () => {
  const os = () => copyOf("openspec", "Fission-AI+OpenSpec")

  it("counts every change's tasks as openspec does: its list, and each task done or not as its apply instructions say", async () => {
    const root = os()
    const listed = await listJson(root)
    const theirs = ((await openspec(root, "list", "--json")).json() as { changes: Array<{ name: string; completedTasks: number; totalTasks: number }> }).changes
    const active = listed.filter((change) => change.state !== "archived")
    expect(active.map((change) => change.id).sort()).toEqual(theirs.map((change) => change.name).sort())
    for (const change of active) {
      const their = theirs.find((c) => c.name === change.id)!
      expect([change.id, change.tasks?.done ?? 0, change.tasks?.total ?? 0]).toEqual([change.id, their.completedTasks, their.totalTasks])
      const apply = (await openspec(root, "instructions", "apply", "--change", change.id, "--json")).json() as { tasks: Array<{ description: string; done: boolean }> }
      const ours = parseOpenSpecTasks(existsSync(join(root, "openspec", "changes", change.id, "tasks.md"))
        ? readFileSync(join(root, "openspec", "changes", change.id, "tasks.md"), "utf8")
        : null)
      expect(ours.tasks.map((task) => task.status === "complete")).toEqual(apply.tasks.map((task) => task.done))
    }
    expect(listed.filter((change) => change.state === "archived").map((change) => change.id)).toEqual(["2025-10-14-slim-root-agents-file"])
  })

  it("names by path every spec delta openspec show finds in a change", async () => {
    const root = os()
    const id = "add-change-stacking-awareness"
    const shown = (await openspec(root, "show", id, "--json")).json() as { id: string; deltas: Array<{ spec: string }> }
    expect(shown.id).toBe(id)
    const run = await loop(root, "openspec/changes", ["--change", id, "--max-iterations", "1"], { TREE_AGENT_TICKS: "0" })
    expect(run.code, run.stderr).toBe(3)
    const prompt = run.prompt(id, 1)
    expect(shown.deltas.length).toBeGreaterThan(0)
    for (const spec of new Set(shown.deltas.map((delta) => delta.spec))) {
      expect(prompt).toContain(`- openspec/changes/${id}/specs/${spec}/spec.md`)
    }
  })

  it("runs a loop to completion: the prompt carries the change as OpenSpec lays it out, and openspec reports the same before and after", async () => {
    const root = os()
    const before = await openspecReports(root)
    // A change with no task list: the agent only adds a file of its own, as an implementation does.
    const run = await loop(root, "openspec/changes", ["--change", "schema-alias", "--max-iterations", "2"])
    expect([run.code, run.stderr]).toEqual([0, ""])
    expect(run.stdout).toContain("complete: the promise was accepted at iteration 1")
    expect(await openspecReports(root)).toEqual(before)
    const prompt = run.prompt("schema-alias-support", 1)
    expect(prompt).toContain("- This change is an OpenSpec change (`openspec/changes/schema-alias-support/`): `openspec validate schema-alias-support` checks it")
    expect(prompt).toContain("Do not archive the change (`openspec archive`)")
    expect(prompt).toContain(readFileSync(join(root, "openspec", "changes", "schema-alias-support", "proposal.md"), "utf8").trim())
    expect(prompt).toContain("- openspec/config.yaml")
    // spool's state is under a .spool/ of its own, out of git's sight and openspec's.
    expect(existsSync(join(root, ".spool", ".state", "ralph", "schema-alias-support", "state.json"))).toBe(true)
    expect(git(root, "status", "--porcelain")).toBe("")
  })

  it("sweeps every ready change (--continue-ready): the complete one skipped, each merged, and openspec sees only the work", async () => {
    const root = os()
    const run = await loop(root, "openspec/changes", ["--continue-ready", "--max-parallel", "2", "--merge", "--max-iterations", "2"], {
      TREE_AGENT_TICKS: "all"
    })
    expect([run.code, run.stderr]).toEqual([0, ""])
    expect(run.stdout).toContain("sweeping 3 ready changes, 2 at a time: add-change-stacking-awareness, fix-schemas-root-selection, schema-alias-support")
    expect(run.stdout).toContain("=== sweep: 4 changes: 3 complete, 1 already complete ===")
    expect(run.stdout).toContain("graceful-status-no-changes: already complete: every task is done")
    expect(run.stdout).toContain("total: 3 iterations, 3 merged into main")
    expect(run.prompt("fix-schemas-root-selection", 1)).toContain(
      "Progress: 13/14 complete (from tasks.md; mark tasks there as you finish them).\nCurrent task: 3.4: Verify the focused schemas suite on Windows CI"
    )
    const after = (await listJson(root)).filter((change) => change.state !== "archived")
    expect(after.map((change) => [change.id, change.state, change.tasks])).toEqual([
      ["add-change-stacking-awareness", "complete", { done: 22, shelved: 0, total: 22 }],
      ["fix-schemas-root-selection", "complete", { done: 14, shelved: 0, total: 14 }],
      ["graceful-status-no-changes", "complete", { done: 8, shelved: 0, total: 8 }],
      ["schema-alias-support", "complete", null]
    ])
    // What openspec reports here is what it reports of the commits alone: spool's worktrees, merges and state are invisible to it.
    const clone = mkdtempSync(join(tmpdir(), "spool-openspec-clone-"))
    git(clone, "clone", "-q", root, ".")
    expect(await openspecReports(root)).toEqual(await openspecReports(clone))
    expect(readdirSync(join(root, ".spool", ".state")).sort()).toEqual([".gitignore", "merges", "ralph", "worktrees"])
    expect(git(root, "status", "--porcelain")).toBe("")
  })
})

describe("a spec-kit repository (specs/ beside .specify/)", () => {
  const speckit = () => copyOf("speckit", "10XDEVCLUB+overengineering-tictactoe-speckit")

  it("lists each feature with a spec as a change, and its tasks as spec-kit counts them", async () => {
    const root = speckit()
    const listed = await listJson(root)
    expect(listed.map((change) => [change.id, change.state, change.tasks])).toEqual([
      ["001-game-lifecycle", "ready", null],
      ["002-game-board", "ready", null],
      ["013-configurable-chain-length", "ready", { done: 0, shelved: 0, total: 29 }]
    ])
    const tasks = readFileSync(join(root, "specs", "013-configurable-chain-length", "tasks.md"), "utf8")
    expect(tasks.split("\n").filter((line) => /^- \[[ xX]\] /.test(line)).length).toBe(29)
  })

  it("runs a loop by a number's prefix: spec and plan quoted, phases in the progress, --require-tasks held to its tasks", async () => {
    const root = speckit()
    const run = await loop(root, "specs", ["--change", "013", "--require-tasks", "--max-iterations", "3"], {
      TREE_AGENT_TICKS: "1,all",
      TREE_AGENT_CLAIM: "always",
      TREE_AGENT_DONE: "X"
    })
    expect([run.code, run.stderr]).toEqual([0, ""])
    expect(run.stdout).toContain("completion refused: tasks.md still has 28 open tasks (--require-tasks)")
    expect(run.stdout).toContain("complete: the promise was accepted at iteration 2")
    const feature = join(root, "specs", "013-configurable-chain-length")
    const first = run.prompt("013-configurable-chain-length", 1)
    expect(first).toContain(`### Change proposal (\`013-configurable-chain-length\`)\n\n${readFileSync(join(feature, "spec.md"), "utf8").trim()}`)
    expect(first).toContain(`### Plan\n\n${readFileSync(join(feature, "plan.md"), "utf8").trim()}`)
    expect(first).toContain("Progress: 0/29 complete (from tasks.md; mark tasks there as you finish them).\nPhase: Phase 1: Setup: 0/1 complete\nCurrent task: T001: Run `./gradlew build`")
    expect(first).toContain("This change is a spec-kit feature (`specs/013-configurable-chain-length/`)")
    for (const document of ["contracts/gameboard-api.md", "data-model.md", "research.md", "quickstart.md", "checklists/requirements.md"]) {
      expect(first).toContain(`- specs/013-configurable-chain-length/${document}`)
    }
    expect(first).toContain("- .specify/memory/constitution.md")
    expect(run.prompt("013-configurable-chain-length", 2)).toContain("Phase: Phase 2: Foundational (Blocking Prerequisites): 0/7 complete\nCurrent task: T002:")
    const status = await spool(["ralph", "--status", "--change", "013"], { cwd: root })
    expect(status.stdout).toContain("tasks:     29/29 complete")
    expect(existsSync(join(root, ".spool", ".state", "ralph", "013-configurable-chain-length", "history.jsonl"))).toBe(true)
    expect(git(root, "status", "--porcelain")).toBe("")
  })

  it("has no modules to pick from, and an ambiguous number asks for more of it", async () => {
    const root = speckit()
    const module = await spool(["ralph", "--module", "013", "--change", "013", "--no-interactive"], { cwd: root })
    expect([module.code, module.stderr]).toEqual([2, "spool: --module: a spec-kit tree has no modules; name the change with --change\n"])
    const ambiguous = await spool(["ralph", "--change", "00", "--no-interactive"], { cwd: root })
    expect([ambiguous.code, ambiguous.stderr]).toEqual([2, "spool: change '00' is ambiguous; it matches: 001-game-lifecycle, 002-game-board; give more of the id\n"])
  })
})

describe("an ito repository (withakay/ito's own .ito/)", () => {
  const ito = () => copyOf("ito", "withakay+ito")

  it("counts each change's tasks in either of ito's forms, and lists the one without a proposal as not ready", async () => {
    const root = ito()
    const listed = await listJson(root)
    // The status lines and checkboxes each file holds, as ito writes them.
    expect(listed.map((change) => [change.id, change.state, change.tasks])).toEqual([
      ["000-16_fix-opencode-agents-path", "not-ready", { done: 4, shelved: 0, total: 4 }],
      ["016-18_add-archived-list-filter", "complete", { done: 5, shelved: 0, total: 5 }],
      ["025-12_narrow-coordination-branch", "complete", { done: 1, shelved: 0, total: 1 }],
      ["030-05_managed-file-ownership", "ready", { done: 0, shelved: 0, total: 5 }],
      ["2026-04-25-016-17_add-list-archive", "archived", null]
    ])
    expect(listed[0]).toMatchObject({ ready: false, why: "no proposal.md" })
  })

  it("takes ito's validation commands in .ito/config.json as --verify, keeps state in .ito/.state/ralph/ beside ito's own, and completes once a check passes", async () => {
    const root = ito()
    const id = "030-05_managed-file-ownership"
    // What `ito ralph` left there: its own state.json, and context added with `ito ralph --add-context`.
    const state = join(root, ".ito", ".state", "ralph", id)
    mkdirSync(state, { recursive: true })
    const itoState = JSON.stringify({ changeId: id, iteration: 2, history: [], contextFile: `.ito/.state/ralph/${id}/context.md` })
    writeFileSync(join(state, "state.json"), itoState)
    writeFileSync(join(state, "context.md"), "Keep the registry format stable.\n")
    const [check] = (JSON.parse(readFileSync(join(root, ".ito", "config.json"), "utf8")) as { ralph: { validationCommands: Array<string> } }).ralph.validationCommands
    const rejected = await loop(root, ".ito/changes", ["--change", "030-05", "--max-iterations", "1"], { TREE_AGENT_TICKS: "all" })
    expect(rejected.code, rejected.stderr).toBe(3)
    expect(rejected.stdout).toContain(`promise rejected: verify failed: ${check}`)
    const prompt = rejected.prompt(id, 1)
    expect(prompt).toContain(`### Module (\`030\`)\n\n${readFileSync(join(root, ".ito", "modules", "030_ito-self-hosting-reliability", "module.md"), "utf8").trim()}`)
    expect(prompt).toContain("`ito validate 030-05_managed-file-ownership` checks it")
    expect(prompt).toContain(`## How your claim is checked`)
    expect(prompt).toContain("## Additional Context (added by user mid-loop)\n\nKeep the registry format stable.")
    const status = JSON.parse((await spool(["ralph", "--status", "--json", "--change", id], { cwd: root })).stdout) as { settings: unknown; tasks: unknown }
    expect(status.settings).toEqual({ file: ".ito/config.json", fromFile: ["verify"], fromCommandLine: ["change", "max-iterations", "harness", "harness-command", "no-stream"] })
    expect(status.tasks).toEqual({ total: 5, complete: 5, shelved: 0 })
    // The command line wins over ito's config, as over spool's.
    const passed = await loop(root, ".ito/changes", ["--change", "030-05", "--max-iterations", "1", "--verify", "true"])
    expect([passed.code, passed.stderr]).toEqual([0, ""])
    expect(readdirSync(join(root, ".ito", ".state", "ralph")).sort()).toEqual([".gitignore", id])
    expect(readFileSync(join(state, "state.json"), "utf8")).toBe(itoState)
    expect(JSON.parse(readFileSync(join(state, "spool-state.json"), "utf8"))).toMatchObject({ changeId: id, status: "complete" })
    expect(existsSync(join(root, ".ito", ".state", ".gitignore"))).toBe(false)
    expect(git(root, "status", "--porcelain")).toBe("")
  })
})

describe("a repository holding several trees", () => {
  const both = () => {
    const root = mkdtempSync(join(tmpdir(), "spool-trees-"))
    cpSync(join(fixtures, "openspec", "Fission-AI+OpenSpec", "repo"), root, { recursive: true })
    mkdirSync(join(root, ".spool", "changes", "001-01_local"), { recursive: true })
    writeFileSync(join(root, ".spool", "changes", "001-01_local", "proposal.md"), "# A change of spool's own\n")
    commitAll(root)
    return root
  }

  it("names the trees it found and asks for --layout (exit 2), full command line and plain --status alike", async () => {
    const root = both()
    const message = `spool: ${root} holds more than one tree of changes: .spool/ (spool), openspec/ (openspec); pick one with --layout spool|openspec, or set "layout" in the "ralph" section of .spool/config.json\n`
    for (const args of [["ralph", "--list"], ["ralph", "--status"]]) {
      const result = await spool(args, { cwd: root })
      expect([result.code, result.stderr]).toEqual([2, message])
    }
    const bad = await spool(["ralph", "--list", "--layout", "openspek"], { cwd: root })
    expect([bad.code, bad.stderr]).toEqual([2, "spool: --layout must be one of spool, ito, openspec, speckit, got 'openspek'\n"])
  })

  it("reads the tree --layout names, or the one the settings file names, the command line winning", async () => {
    const root = both()
    expect((await listJson(root, "--layout", "openspec")).map((change) => change.id)).toContain("fix-schemas-root-selection")
    writeFileSync(join(root, ".spool", "config.json"), JSON.stringify({ ralph: { layout: "spool" } }))
    expect((await listJson(root)).map((change) => change.id)).toEqual(["001-01_local"])
    expect((await listJson(root, "--layout", "openspec")).map((change) => change.id)).toContain("schema-alias-support")
    const status = await spool(["ralph", "--status"], { cwd: root })
    expect([status.code, status.stderr]).toEqual([0, ""])
  })
})
