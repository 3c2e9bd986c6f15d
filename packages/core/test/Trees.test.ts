import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ChangeId } from "../src/domain/Domain.js"
import { makeLoopInputs } from "../src/loop/LoopInputs.js"
import { LoopReporter } from "../src/output/LoopReporter.js"
import { decideLayout, isTreePath, type LayoutName, type Marker, recognise, SETTINGS_FILE, shapes, statePaths } from "../src/tree/Layout.js"
import { treesIn } from "../src/tree/TreeFinder.js"
import { FileSystem, Path } from "@effect/platform"
import { Workspace } from "../src/state/Workspace.js"

const tree = (files: Record<string, string>) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "spool-trees-")))
  for (const [file, content] of Object.entries(files)) {
    const target = path.join(root, file)
    if (file.endsWith("/")) fs.mkdirSync(target, { recursive: true })
    else {
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.writeFileSync(target, content)
    }
  }
  return root
}

const withWorkspace = <A, E, R extends NodeContext.NodeContext = never>(
  cwd: string,
  f: (ws: Workspace["Type"]) => Effect.Effect<A, E, R>,
  layout: LayoutName | null = null
) => Effect.flatMap(Workspace, f).pipe(Effect.provide(Workspace.layer(cwd, layout)), Effect.provide(NodeContext.layer))

const ids = (list: ReadonlyArray<string>) => [...list]

const failureOf = (cwd: string, layout: LayoutName | null = null) =>
  Effect.flip(withWorkspace(cwd, (ws) => Effect.succeed(ws.root), layout))

const itoTree = () =>
  tree({
    ".ito/config.json": "{}",
    ".ito/changes/001-01_add-auth/proposal.md": "# auth\n",
    ".ito/changes/001-01_add-auth/tasks.md": "### Task 1.1: A\n- **Status**: [ ] pending\n",
    ".ito/changes/001-01_add-auth/design.md": "# design\n",
    ".ito/changes/001-01_add-auth/.ito.yaml": "schema: spec-driven\n",
    ".ito/changes/archive/2026-01-01-000-01_old/proposal.md": "# old\n",
    ".ito/modules/001_auth/module.md": "# the auth module\n",
    ".ito/.state/audit/events.jsonl": "{}\n"
  })

const openSpecTree = () =>
  tree({
    "openspec/config.yaml": "schema: spec-driven\n",
    "openspec/specs/auth/spec.md": "# auth\n",
    "openspec/changes/add-2fa/proposal.md": "## Why\n",
    "openspec/changes/add-2fa/tasks.md": "- [x] 1.1 a\n- [ ] 1.2 b\n",
    "openspec/changes/add-2fa/design.md": "# design\n",
    "openspec/changes/add-2fa/specs/auth/spec.md": "## ADDED Requirements\n",
    "openspec/changes/add-2fa/.openspec.yaml": "schema: spec-driven\n",
    "openspec/changes/001-refactor/proposal.md": "## Why\n",
    "openspec/changes/drafted/.openspec.yaml": "schema: spec-driven\n",
    "openspec/changes/archive/2025-01-01-add-login/proposal.md": "## Why\n",
    "src/app.ts": ""
  })

const specKitTree = () =>
  tree({
    ".specify/memory/constitution.md": "# Constitution\n",
    "specs/001-user-auth/spec.md": "# Feature: auth\n",
    "specs/002-chat/spec.md": "# Feature: chat\n",
    "specs/002-chat/plan.md": "# Plan: chat\n",
    "specs/002-chat/tasks.md": "## Phase 1: Setup\n- [ ] T001 [P] Create it\n",
    "specs/002-chat/research.md": "# research\n",
    "specs/002-chat/contracts/chat.openapi.yaml": "openapi: 3.1.0\n",
    "specs/002-chat/checklists/requirements.md": "- [ ] CHK001 clear\n",
    "specs/FEATURE-INVENTORY.md": "# every feature\n"
  })

describe("recognising a tree", () => {
  it.effect("knows a tree by a directory only: a file of that name is none", () =>
    Effect.gen(function*() {
      const root = tree({ "openspec": "not a directory\n", ".specify/memory/constitution.md": "# c\n" })
      assert.deepStrictEqual(yield* treesIn(yield* FileSystem.FileSystem, yield* Path.Path, root), ["speckit"])
    }).pipe(Effect.provide(NodeContext.layer)))


  const found = (...markers: Array<Marker>) => recognise((marker) => markers.includes(marker))

  it("knows each tree by its directory, OpenSpec's as openspec finds its root and spec-kit's by .specify/", () => {
    assert.deepStrictEqual(found(".spool", ".spool/changes"), ["spool"])
    assert.deepStrictEqual(found(".ito"), ["ito"])
    assert.deepStrictEqual(found("openspec"), ["openspec"])
    assert.deepStrictEqual(found(".specify"), ["speckit"])
    assert.deepStrictEqual(found(), [])
  })

  it("takes a lone .spool/ for a spool tree with no change yet, but one without changes/ beside another tree for spool's settings and state", () => {
    assert.deepStrictEqual(found(".spool"), ["spool"])
    assert.deepStrictEqual(found(".spool", "openspec"), ["openspec"])
    assert.deepStrictEqual(found(".spool", ".spool/changes", "openspec", ".specify"), ["spool", "openspec", "speckit"])
  })

  it("chooses the one tree found, the one asked for, or none; several without a choice are ambiguous", () => {
    assert.deepStrictEqual(decideLayout(["ito"], null), { _tag: "Chosen", layout: "ito" })
    assert.deepStrictEqual(decideLayout([], null), { _tag: "None" })
    assert.deepStrictEqual(decideLayout(["spool", "openspec"], null), { _tag: "Ambiguous", found: ["spool", "openspec"] })
    assert.deepStrictEqual(decideLayout(["spool", "openspec"], "openspec"), { _tag: "Chosen", layout: "openspec" })
    assert.deepStrictEqual(decideLayout(["spool"], "speckit"), { _tag: "None" })
  })

  it("takes .spool and what is under it as the loop's own", () => {
    const isSpoolPath = (path: string) => isTreePath(shapes.spool, path)
    assert.isTrue(isSpoolPath(".spool"))
    assert.isTrue(isSpoolPath(".spool/changes/x/tasks.md"))
    assert.isFalse(isSpoolPath(".spoolrc"))
    assert.isFalse(isSpoolPath("src/.spool"))
  })

  it("takes the tree's own directory as the loop's too, and .spool/ beside it, where spool keeps its state", () => {
    assert.isTrue(isTreePath(shapes.openspec, "openspec/changes/add-2fa/tasks.md"))
    assert.isTrue(isTreePath(shapes.openspec, ".spool/.state/ralph/add-2fa/state.json"))
    assert.isFalse(isTreePath(shapes.openspec, "openspec.md"))
    assert.isTrue(isTreePath(shapes.speckit, "specs/003-chat/tasks.md"))
    assert.isFalse(isTreePath(shapes.speckit, "src/specs/x.ts"))
    assert.isTrue(isTreePath(shapes.ito, ".ito/changes/001-01_x/tasks.md"))
    assert.isFalse(isTreePath(shapes.spool, "openspec/changes/add-2fa/tasks.md"))
  })

  it("lays out each tree as its own tool does", () => {
    const layout = (name: LayoutName) => {
      const { changesDir, archiveDir, modulesDir, proposal, quoted, tasks, taskFormat, documents, projectDocuments, ralphDir, stateFile, contextFile, nativeSettings, title } =
        shapes[name]
      return { title, changesDir, archiveDir, modulesDir, proposal, quoted, tasks, taskFormat, documents, projectDocuments, ralphDir, stateFile, contextFile, nativeSettings }
    }
    assert.deepStrictEqual(layout("spool"), {
      title: "spool", changesDir: ".spool/changes", archiveDir: ".spool/changes/archive", modulesDir: ".spool/modules", proposal: "proposal.md", quoted: [],
      tasks: "tasks.md", taskFormat: "spool", documents: "markdown", projectDocuments: [], ralphDir: ".spool/.state/ralph", stateFile: "state.json", contextFile: "context.txt", nativeSettings: null
    })
    assert.deepStrictEqual(layout("ito"), {
      title: "ito", changesDir: ".ito/changes", archiveDir: ".ito/changes/archive", modulesDir: ".ito/modules", proposal: "proposal.md", quoted: [],
      tasks: "tasks.md", taskFormat: "spool", documents: "markdown", projectDocuments: [], ralphDir: ".ito/.state/ralph", stateFile: "spool-state.json", contextFile: "context.md",
      nativeSettings: ".ito/config.json"
    })
    assert.deepStrictEqual(layout("openspec"), {
      title: "OpenSpec", changesDir: "openspec/changes", archiveDir: "openspec/changes/archive", modulesDir: null, proposal: "proposal.md", quoted: [],
      tasks: "tasks.md", taskFormat: "openspec", documents: "markdown", projectDocuments: ["openspec/project.md", "openspec/config.yaml"],
      ralphDir: ".spool/.state/ralph", stateFile: "state.json", contextFile: "context.txt", nativeSettings: null
    })
    assert.deepStrictEqual(layout("speckit"), {
      title: "spec-kit", changesDir: "specs", archiveDir: null, modulesDir: null, proposal: "spec.md", quoted: [{ file: "plan.md", title: "Plan" }],
      tasks: "tasks.md", taskFormat: "speckit", documents: "all", projectDocuments: [".specify/memory/constitution.md"],
      ralphDir: ".spool/.state/ralph", stateFile: "state.json", contextFile: "context.txt", nativeSettings: null
    })
  })

  it("tells the agent of each tree's own tools, and a person how to start a first change", () => {
    assert.deepStrictEqual(shapes.spool.commands, [])
    assert.include(shapes.ito.commands.join("\n"), "`ito validate {id}` checks it, and `ito tasks complete {id} <task>` marks a task done")
    assert.include(shapes.openspec.commands.join("\n"), "`openspec validate {id}` checks it and its spec deltas, and `openspec show {id}` shows it.")
    assert.include(shapes.openspec.commands.join("\n"), "Do not archive the change (`openspec archive`)")
    assert.include(shapes.speckit.commands.join("\n"), "mark each task done as `- [X]` there.")
    assert.strictEqual(shapes.spool.firstChange, "mkdir -p .spool/changes/001-01_my-change && echo '# My change' > .spool/changes/001-01_my-change/proposal.md")
    assert.strictEqual(shapes.ito.firstChange, "mkdir -p .ito/changes/001-01_my-change && echo '# My change' > .ito/changes/001-01_my-change/proposal.md")
    assert.include(shapes.openspec.firstChange, "openspec new change <name>")
    assert.include(shapes.speckit.firstChange, "mkdir -p specs/001-my-feature and write its spec.md")
  })

  it("keeps every tree's loop state where git and the tree's own tools leave it alone", () => {
    assert.deepStrictEqual(statePaths(shapes.spool), [".spool/.state"])
    assert.deepStrictEqual(statePaths(shapes.ito), [".spool/.state", ".ito/.state/ralph"])
    assert.deepStrictEqual(statePaths(shapes.openspec), [".spool/.state"])
    assert.deepStrictEqual(statePaths(shapes.speckit), [".spool/.state"])
    // The directories that get a .gitignore of their own: in an ito tree only spool's part of ito's.
    assert.deepStrictEqual(Object.values(shapes).map((shape) => [shape.layout, shape.ignoredDirs]), [
      ["spool", [".spool/.state"]],
      ["ito", [".ito/.state/ralph"]],
      ["openspec", [".spool/.state"]],
      ["speckit", [".spool/.state"]]
    ])
    assert.strictEqual(SETTINGS_FILE, ".spool/config.json")
  })
})

describe("an ito tree (.ito/)", () => {
  it.effect("resolves a change with its module, and keeps its state in .ito/.state/ralph/ as the specification says", () =>
    Effect.gen(function*() {
      const root = itoTree()
      const change = yield* withWorkspace(path.join(root, ".ito", "changes"), (ws) => ws.resolveChange("001-01"))
      assert.strictEqual(change.proposalPath, path.join(root, ".ito/changes/001-01_add-auth/proposal.md"))
      assert.strictEqual(change.modulePath, path.join(root, ".ito/modules/001_auth/module.md"))
      assert.strictEqual(change.moduleId, "001")
      const state = yield* withWorkspace(root, (ws) => Effect.map(ws.ensureStateDir(ChangeId.make("001-01_add-auth")), (dir) => [dir, ws.tree.layout]))
      assert.deepStrictEqual(state, [path.join(root, ".ito/.state/ralph/001-01_add-auth"), "ito"])
      // Only spool's part of .ito/.state/ is ignored: ito commits files of its own there.
      assert.isTrue(fs.existsSync(path.join(root, ".ito/.state/ralph/.gitignore")))
      assert.isFalse(fs.existsSync(path.join(root, ".ito/.state/.gitignore")))
      assert.isFalse(fs.existsSync(path.join(root, ".spool")))
      assert.deepStrictEqual(yield* withWorkspace(root, (ws) => ws.archivedChanges), ["2026-01-01-000-01_old"])
    }))
})

describe("an OpenSpec tree (openspec/)", () => {
  it.effect("lists the changes with a proposal, never the archive, and keeps spool's state in a .spool/ of its own", () =>
    Effect.gen(function*() {
      const root = openSpecTree()
      const ws = yield* withWorkspace(path.join(root, "src"), (ws) => Effect.all([ws.activeChanges, ws.archivedChanges, Effect.succeed(ws.tree.layout)]))
      assert.deepStrictEqual([ids(ws[0]), ids(ws[1]), ws[2]], [["001-refactor", "add-2fa"], ["2025-01-01-add-login"], "openspec"])
      const dir = yield* withWorkspace(root, (ws) => ws.ensureStateDir(ChangeId.make("add-2fa")))
      assert.strictEqual(dir, path.join(root, ".spool/.state/ralph/add-2fa"))
      assert.isTrue(fs.existsSync(path.join(root, ".spool/.state/.gitignore")))
      // spool's .spool/ beside the tree holds state only: the directory is still an OpenSpec tree alone.
      assert.strictEqual(yield* withWorkspace(root, (ws) => Effect.succeed(ws.tree.layout)), "openspec")
    }))

  it.effect("resolves a unique prefix, with no module even for a numbered name, and says where a missing proposal goes", () =>
    Effect.gen(function*() {
      const root = openSpecTree()
      const change = yield* withWorkspace(root, (ws) => ws.resolveChange("add"))
      assert.strictEqual(change.id, "add-2fa")
      assert.strictEqual(change.tasksPath, path.join(root, "openspec/changes/add-2fa/tasks.md"))
      assert.strictEqual((yield* withWorkspace(root, (ws) => ws.resolveChange("001"))).moduleId, null)
      const missing = yield* Effect.flip(withWorkspace(root, (ws) => ws.resolveChange("drafted")))
      assert.strictEqual(missing.message, "change 'drafted' has no proposal.md; add openspec/changes/drafted/proposal.md or pick another change")
      const unknown = yield* Effect.flip(withWorkspace(root, (ws) => ws.resolveChange("nope")))
      assert.strictEqual(unknown.message, "unknown change 'nope'; active changes: 001-refactor, add-2fa")
    }))

  it.effect("names the design, the spec deltas and the project's config by path, and reads the tasks as openspec counts them", () =>
    Effect.gen(function*() {
      const root = openSpecTree()
      const warnings: Array<string> = []
      const [documents, tasks] = yield* withWorkspace(root, (ws) =>
        Effect.flatMap(ws.resolveChange("add-2fa"), (change) =>
          Effect.flatMap(makeLoopInputs(change), (inputs) => Effect.all([inputs.otherDocuments, inputs.readTasks]))).pipe(
            Effect.provide(LoopReporter.layerTest(warnings))
          ))
      assert.deepStrictEqual(documents, [
        "openspec/changes/add-2fa/design.md",
        "openspec/changes/add-2fa/specs/auth/spec.md",
        "openspec/config.yaml"
      ])
      assert.deepStrictEqual(tasks.tasks.map((t) => [t.id, t.status]), [["1.1", "complete"], ["1.2", "pending"]])
    }))
})

describe("a spec-kit tree (specs/ beside .specify/)", () => {
  it.effect("takes each feature directory with a spec.md as a change, spec.md as its proposal and its plan quoted after it", () =>
    Effect.gen(function*() {
      const root = specKitTree()
      assert.deepStrictEqual(ids(yield* withWorkspace(root, (ws) => ws.activeChanges)), ["001-user-auth", "002-chat"])
      assert.deepStrictEqual(yield* withWorkspace(root, (ws) => ws.archivedChanges), [])
      fs.mkdirSync(path.join(root, "specs", "003-draft"))
      fs.writeFileSync(path.join(root, "specs", "003-draft", "plan.md"), "# Plan without a spec\n")
      const dirs = yield* withWorkspace(root, (ws) => ws.changeDirectories)
      assert.deepStrictEqual(dirs.map((dir) => [dir.id, dir.hasProposal]), [["001-user-auth", true], ["002-chat", true], ["003-draft", false]])
      const change = yield* withWorkspace(root, (ws) => ws.resolveChange("002"))
      assert.strictEqual(change.id, "002-chat")
      assert.strictEqual(change.proposalPath, path.join(root, "specs/002-chat/spec.md"))
      assert.strictEqual(change.moduleId, null)
      assert.deepStrictEqual(change.quoted, [{ title: "Plan", path: path.join(root, "specs/002-chat/plan.md") }])
      const ambiguous = yield* Effect.flip(withWorkspace(root, (ws) => ws.resolveChange("00")))
      assert.strictEqual(ambiguous._tag === "ChangeError" ? ambiguous.reason : ambiguous._tag, "Ambiguous")
    }))

  it.effect("names every other file of the feature (its contracts too) and the constitution, and reads its plan and its tasks", () =>
    Effect.gen(function*() {
      const root = specKitTree()
      const [documents, quoted, tasks] = yield* withWorkspace(root, (ws) =>
        Effect.flatMap(ws.resolveChange("002-chat"), (change) =>
          Effect.flatMap(makeLoopInputs(change), (inputs) => Effect.all([inputs.otherDocuments, inputs.readQuoted, inputs.readTasks]))).pipe(
            Effect.provide(LoopReporter.layerTest([]))
          ))
      assert.deepStrictEqual(documents, [
        "specs/002-chat/checklists/requirements.md",
        "specs/002-chat/contracts/chat.openapi.yaml",
        "specs/002-chat/research.md",
        ".specify/memory/constitution.md"
      ])
      assert.deepStrictEqual(quoted, [{ title: "Plan", body: "# Plan: chat\n" }])
      assert.deepStrictEqual(tasks.tasks.map((t) => [t.id, t.parallel, t.phase]), [["T001", true, "Phase 1: Setup"]])
      // A feature not planned yet has no plan to quote.
      const unplanned = yield* withWorkspace(root, (ws) =>
        Effect.flatMap(ws.resolveChange("001"), (change) => Effect.flatMap(makeLoopInputs(change), (inputs) => inputs.readQuoted)).pipe(
          Effect.provide(LoopReporter.layerTest([]))
        ))
      assert.deepStrictEqual(unplanned, [])
    }))
})

describe("several trees, and the nearest one", () => {
  it.effect("asks which when one directory holds several, and takes the one asked for", () =>
    Effect.gen(function*() {
      const root = tree({ ".spool/changes/001-01_local/proposal.md": "# local\n", "openspec/changes/add-2fa/proposal.md": "## Why\n" })
      const error = yield* failureOf(root)
      assert.strictEqual(error._tag, "LayoutError")
      assert.strictEqual(
        error.message,
        `${root} holds more than one tree of changes: .spool/ (spool), openspec/ (openspec); pick one with --layout spool|openspec, or set "layout" in the "ralph" section of .spool/config.json`
      )
      assert.deepStrictEqual(ids(yield* withWorkspace(root, (ws) => ws.activeChanges, "openspec")), ["add-2fa"])
      assert.deepStrictEqual(ids(yield* withWorkspace(root, (ws) => ws.activeChanges, "spool")), ["001-01_local"])
      const none = yield* failureOf(root, "speckit")
      assert.strictEqual(none.message, `no spec-kit tree (specs/ beside .specify/) found in ${root} or any parent directory; check --layout`)
    }))

  it.effect("takes the nearest directory holding a tree, and with --layout the nearest holding that one", () =>
    Effect.gen(function*() {
      const root = tree({ ".spool/changes/001-01_outer/proposal.md": "# outer\n", "web/openspec/changes/add-2fa/proposal.md": "## Why\n", "web/src/": "" })
      const inner = path.join(root, "web")
      assert.deepStrictEqual(yield* withWorkspace(path.join(inner, "src"), (ws) => Effect.succeed([ws.root, ws.tree.layout])), [inner, "openspec"])
      assert.deepStrictEqual(yield* withWorkspace(path.join(inner, "src"), (ws) => Effect.succeed([ws.root, ws.tree.layout]), "spool"), [root, "spool"])
    }))

  it.effect("finds no tree outside every one, naming the four it looks for", () =>
    Effect.gen(function*() {
      const outside = tree({ "a.txt": "" })
      const error = yield* failureOf(outside)
      assert.strictEqual(error._tag, "WorkspaceNotFoundError")
      assert.include(error.message, "(.spool/, .ito/, openspec/, or specs/ beside .specify/)")
    }))
})
