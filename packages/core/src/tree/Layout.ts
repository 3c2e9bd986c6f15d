import { Schema } from "effect"

/**
 * The trees of changes spool reads: its own `.spool/`, ito's `.ito/` (the same shape), OpenSpec's
 * `openspec/` and spec-kit's `specs/` beside `.specify/`.
 */
export const LayoutName = Schema.Literal("spool", "ito", "openspec", "speckit")
export type LayoutName = typeof LayoutName.Type
export const layoutNames: ReadonlyArray<LayoutName> = LayoutName.literals

/** How a tree's `tasks.md` is read: spool's (and ito's) two forms, OpenSpec's checkboxes, spec-kit's task lines. */
export type TaskFormat = "spool" | "openspec" | "speckit"

/** The directory spool keeps its own working files in (worktrees, merges) and, beside a foreign tree, its state and settings. */
export const WORK_DIR = ".spool/.state"
/** spool's settings file, relative to the directory holding the tree. */
export const SETTINGS_FILE = ".spool/config.json"

/** A document of the change quoted whole in every prompt, after the proposal. */
export interface QuotedFile {
  readonly file: string
  readonly title: string
}

/** How a tree lays out its changes; every path is relative to the directory holding the tree (the root). */
export interface TreeShape {
  readonly layout: LayoutName
  /** The tree as its users call it (`OpenSpec`). */
  readonly title: string
  /** The tree's own directory: `.spool`, `.ito`, `openspec`, `specs`. */
  readonly dir: string
  /** A directory per change. */
  readonly changesDir: string
  /** Archived changes, a directory each; null when the tree archives none. */
  readonly archiveDir: string | null
  /** `<NNN>_<name>/module.md` per module; null when the tree has no modules. */
  readonly modulesDir: string | null
  /** The document quoted as the change's proposal; a change without it is not active. */
  readonly proposal: string
  /** Further documents quoted whole after the proposal (spec-kit's plan). */
  readonly quoted: ReadonlyArray<QuotedFile>
  readonly tasks: string
  readonly taskFormat: TaskFormat
  /** The change's other documents named by path: its markdown, or every file (spec-kit's contracts are often YAML or JSON). */
  readonly documents: "markdown" | "all"
  /** Documents of the whole project named by path in every prompt, when they exist. */
  readonly projectDocuments: ReadonlyArray<string>
  /** A change's loop state is `<ralphDir>/<change-id>/`. */
  readonly ralphDir: string
  /** The loop's state file there: ito's own `ito ralph` keeps a `state.json` of another shape beside spool's. */
  readonly stateFile: string
  /** The context added mid-loop, there: ito's `context.md`, which `ito ralph --add-context` writes too. */
  readonly contextFile: string
  /** Directories spool writes a `.gitignore` of `*` into: its state never reaches a commit. */
  readonly ignoredDirs: ReadonlyArray<string>
  /** The tree's own settings file, whose `ralph` section spool reads too; null when it has none. */
  readonly nativeSettings: string | null
  /** What the prompt's preamble says of the tree's own tools; `{id}` stands for the change id. */
  readonly commands: ReadonlyArray<string>
  /** How to start a change in an empty tree. */
  readonly firstChange: string
}

const spoolLike = (layout: "spool" | "ito", dir: string): TreeShape => ({
  layout,
  title: layout,
  dir,
  changesDir: `${dir}/changes`,
  archiveDir: `${dir}/changes/archive`,
  modulesDir: `${dir}/modules`,
  proposal: "proposal.md",
  quoted: [],
  tasks: "tasks.md",
  taskFormat: "spool",
  documents: "markdown",
  projectDocuments: [],
  ralphDir: `${dir}/.state/ralph`,
  stateFile: layout === "spool" ? "state.json" : "spool-state.json",
  contextFile: layout === "spool" ? "context.txt" : "context.md",
  // ito commits files of its own under `.ito/.state/` (its audit log): only spool's part is ignored there.
  ignoredDirs: layout === "spool" ? [WORK_DIR] : [`${dir}/.state/ralph`],
  nativeSettings: layout === "spool" ? null : `${dir}/config.json`,
  commands: layout === "spool" ? [] : [
    "This change lives in an ito tree (`.ito/`): `ito validate {id}` checks it, and `ito tasks complete {id} <task>` marks a task done in its tasks.md."
  ],
  firstChange: `mkdir -p ${dir}/changes/001-01_my-change && echo '# My change' > ${dir}/changes/001-01_my-change/proposal.md`
})

/** The four trees. */
export const shapes: { readonly [L in LayoutName]: TreeShape } = {
  spool: spoolLike("spool", ".spool"),
  ito: spoolLike("ito", ".ito"),
  openspec: {
    layout: "openspec",
    title: "OpenSpec",
    dir: "openspec",
    changesDir: "openspec/changes",
    archiveDir: "openspec/changes/archive",
    modulesDir: null,
    proposal: "proposal.md",
    quoted: [],
    tasks: "tasks.md",
    taskFormat: "openspec",
    documents: "markdown",
    projectDocuments: ["openspec/project.md", "openspec/config.yaml"],
    ralphDir: `${WORK_DIR}/ralph`,
    stateFile: "state.json",
    contextFile: "context.txt",
    ignoredDirs: [WORK_DIR],
    nativeSettings: null,
    commands: [
      "This change is an OpenSpec change (`openspec/changes/{id}/`): `openspec validate {id}` checks it and its spec deltas, and `openspec show {id}` shows it.",
      "Mark each task `- [x]` in its tasks.md as you finish it. Do not archive the change (`openspec archive`): the loop works on it where it is, and archiving is for a person to do once it is merged."
    ],
    firstChange: "openspec new change <name> (or mkdir -p openspec/changes/<name> and write its proposal.md)"
  },
  speckit: {
    layout: "speckit",
    title: "spec-kit",
    dir: "specs",
    changesDir: "specs",
    archiveDir: null,
    modulesDir: null,
    proposal: "spec.md",
    quoted: [{ file: "plan.md", title: "Plan" }],
    tasks: "tasks.md",
    taskFormat: "speckit",
    documents: "all",
    projectDocuments: [".specify/memory/constitution.md"],
    ralphDir: `${WORK_DIR}/ralph`,
    stateFile: "state.json",
    contextFile: "context.txt",
    ignoredDirs: [WORK_DIR],
    nativeSettings: null,
    commands: [
      "This change is a spec-kit feature (`specs/{id}/`): follow the project's constitution, work through tasks.md phase by phase (tasks marked [P] may go in any order within their phase), and mark each task done as `- [X]` there."
    ],
    firstChange: "specify init, then /speckit.specify in your agent (or mkdir -p specs/001-my-feature and write its spec.md)"
  }
}

/** The paths that tell a tree is in a directory: each is looked for as a directory. */
export const MARKERS = [".spool", ".spool/changes", ".ito", "openspec", ".specify"] as const
export type Marker = typeof MARKERS[number]

/**
 * The trees a directory holds, given which markers it has: `.ito/`, `openspec/` (as `openspec`
 * itself finds its root), `.specify/` (spec-kit's marker, `specs/` beside it), and `.spool/`. A
 * `.spool/` without `changes/` beside another tree only keeps spool's settings and state for it;
 * alone, it is a spool tree with no change yet.
 */
export const recognise = (has: (marker: Marker) => boolean): Array<LayoutName> => {
  const others = ([["ito", ".ito"], ["openspec", "openspec"], ["speckit", ".specify"]] as const)
    .filter(([, marker]) => has(marker))
    .map(([layout]) => layout)
  const spool = has(".spool/changes") || (has(".spool") && others.length === 0)
  return spool ? ["spool", ...others] : others
}

/** Which tree spool works on, or why it cannot tell. */
export type LayoutDecision =
  | { readonly _tag: "Chosen"; readonly layout: LayoutName }
  | { readonly _tag: "None" }
  | { readonly _tag: "Ambiguous"; readonly found: ReadonlyArray<LayoutName> }

/** The one tree found, or the one asked for; several without a choice are for the person to pick from. */
export const decideLayout = (found: ReadonlyArray<LayoutName>, requested: LayoutName | null): LayoutDecision =>
  requested !== null
    ? found.includes(requested) ? { _tag: "Chosen", layout: requested } : { _tag: "None" }
    : found.length === 0
    ? { _tag: "None" }
    : found.length === 1
    ? { _tag: "Chosen", layout: found[0]! }
    : { _tag: "Ambiguous", found }

/** Every directory a tree's loops keep state in, relative to the root: what git status and commits leave out. */
export const statePaths = (shape: TreeShape): ReadonlyArray<string> => [...new Set([WORK_DIR, ...shape.ignoredDirs])]

/** Whether `path` (relative to the root, `/`-separated) is the loop's own or the tree's: never the owner's work the loop keeps apart. */
export const isTreePath = (shape: TreeShape, path: string) =>
  [".spool", shape.dir].some((dir) => path === dir || path.startsWith(`${dir}/`))
