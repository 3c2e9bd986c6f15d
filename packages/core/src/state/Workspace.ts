import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { writeFileAtomic } from "./AtomicFile.js"
import { StateError } from "./StateError.js"
import { type ChangeId, ChangeId as ChangeIdSchema, type ModuleId, moduleIdOf } from "../domain/Domain.js"
import { decideLayout, type LayoutName, LayoutName as LayoutNameSchema, shapes, type TaskFormat, type TreeShape, WORK_DIR } from "../tree/Layout.js"
import { findTrees } from "../tree/TreeFinder.js"

/** Where each tree keeps its changes, as the messages name it. */
const treePlace = (layout: LayoutName) => layout === "speckit" ? "specs/ beside .specify/" : `${shapes[layout].dir}/`
const everyTree = "a tree of changes (.spool/, .ito/, openspec/, or specs/ beside .specify/)"

/** No tree of changes (or none of the layout asked for) in the current directory or any ancestor. */
export class WorkspaceNotFoundError extends Schema.TaggedError<WorkspaceNotFoundError>()("WorkspaceNotFoundError", {
  cwd: Schema.String,
  layout: Schema.optional(LayoutNameSchema)
}) {
  override get message() {
    return this.layout === undefined
      ? `no ${everyTree} found in ${this.cwd} or any parent directory; run spool inside a repository that has one`
      : `no ${shapes[this.layout].title} tree (${treePlace(this.layout)}) found in ${this.cwd} or any parent directory; check --layout`
  }
}

/** A directory holds more than one tree, and neither `--layout` nor the settings file picks one. */
export class LayoutError extends Schema.TaggedError<LayoutError>()("LayoutError", {
  root: Schema.String,
  found: Schema.Array(LayoutNameSchema)
}) {
  override get message() {
    return `${this.root} holds more than one tree of changes: ${this.found.map((layout) => `${treePlace(layout)} (${layout})`).join(", ")}; ` +
      `pick one with --layout ${this.found.join("|")}, or set "layout" in the "ralph" section of .spool/config.json`
  }
}

/** `--change` names no usable change. */
export class ChangeError extends Schema.TaggedError<ChangeError>()("ChangeError", {
  reason: Schema.Literal("InvalidId", "NotFound", "Ambiguous", "MissingProposal", "Outside"),
  input: Schema.String,
  candidates: Schema.Array(Schema.String),
  /** The tree's changes directory and proposal document, for the messages (`.spool/changes`, `proposal.md` unless said). */
  changesDir: Schema.optional(Schema.String),
  proposal: Schema.optional(Schema.String)
}) {
  override get message() {
    const list = (ids: ReadonlyArray<string>) => (ids.length === 0 ? "none" : ids.join(", "))
    const changesDir = this.changesDir ?? ".spool/changes"
    const proposal = this.proposal ?? "proposal.md"
    switch (this.reason) {
      case "InvalidId":
        return `invalid change id '${this.input}': use the name of a directory under ${changesDir}/ (no '/', '\\' or '..')`
      case "NotFound":
        return `unknown change '${this.input}'; active changes: ${list(this.candidates)}`
      case "Ambiguous":
        return `change '${this.input}' is ambiguous; it matches: ${list(this.candidates)}; give more of the id`
      case "Outside":
        return `change '${this.input}' leads outside the repository (a symlink?); spool only works on changes inside it`
      case "MissingProposal":
        return `change '${this.input}' has no ${proposal}; add ${changesDir}/${this.input}/${proposal} or pick another change`
    }
  }
}

/** A change's directory, and whether it holds the tree's proposal (`proposal.md`, spec-kit's `spec.md`). */
export interface ChangeDirectory {
  readonly id: ChangeId
  readonly hasProposal: boolean
}

/** A document of the change quoted whole after the proposal. */
export interface QuotedDocument {
  readonly title: string
  readonly path: string
}

/** A resolved change and where its documents live. */
export interface Change {
  readonly id: ChangeId
  readonly moduleId: ModuleId | null
  readonly dir: string
  readonly proposalPath: string
  readonly tasksPath: string
  /** `.spool/modules/<NNN>_<name>/module.md`, or null when the module has no directory or file. */
  readonly modulePath: string | null
  /** The tree the change is in; absent means spool's own (`.spool/`). */
  readonly tree?: TreeShape
  /** Documents quoted whole after the proposal and the module (spec-kit's plan), when they exist. */
  readonly quoted?: ReadonlyArray<QuotedDocument>
}

/** The tree a change is in: spool's own unless it says otherwise. */
export const treeOf = (change: Change): TreeShape => change.tree ?? shapes.spool

/** How the change's tasks.md is read. */
export const taskFormatOf = (change: Change): TaskFormat => treeOf(change).taskFormat

/** The change's directory relative to the root (`openspec/changes/add-2fa`): the same in a worktree. */
export const relativeDirOf = (change: Change) => `${treeOf(change).changesDir}/${change.id}`

export class Workspace extends Context.Tag("@spool/core/Workspace")<Workspace, {
  /** The directory holding the tree (the repository root for spool). */
  readonly root: string
  /** `<root>/.spool`: spool's settings, and its working files (worktrees, merges) under `.state/`. */
  readonly spoolDir: string
  /** The tree found, and how it lays out its changes. */
  readonly tree: TreeShape
  /** The change directories with a proposal, excluding the archive and dot-directories, sorted. */
  readonly activeChanges: Effect.Effect<ReadonlyArray<ChangeId>>
  /** Every change directory, excluding the archive and dot-directories, sorted, and whether it has its proposal: those without are not active. */
  readonly changeDirectories: Effect.Effect<ReadonlyArray<ChangeDirectory>>
  /** The archived changes' directories (often named `<date>-<change-id>`), sorted; none for a tree that archives none. */
  readonly archivedChanges: Effect.Effect<ReadonlyArray<string>>
  /** An exact change id or a unique prefix of one. */
  readonly resolveChange: (input: string) => Effect.Effect<Change, ChangeError>
  /** `<tree's state>/ralph/<change-id>/` (`.spool/.state/ralph/<change-id>/`, `.ito/.state/ralph/<change-id>/`). */
  readonly stateDir: (changeId: ChangeId) => string
  /** Creates the state directory (and the `.gitignore` that keeps state out of every commit). */
  readonly ensureStateDir: (changeId: ChangeId) => Effect.Effect<string, StateError>
  /** `<root>/.spool/.state`, created with its `.gitignore`: where worktrees and merges are made. */
  readonly ensureWorkDir: Effect.Effect<string, StateError>
  /** Change ids that have a state directory. */
  readonly changesWithState: Effect.Effect<ReadonlyArray<ChangeId>>
}>() {
  /**
   * Finds the tree in `cwd` or its nearest ancestor, as git finds `.git`: the one there, or the
   * `layout` asked for; several there without one asked for is a `LayoutError`.
   */
  static readonly layer = (cwd: string, layout: LayoutName | null = null) =>
    Layer.effect(
      Workspace,
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const found = yield* findTrees(fs, path, cwd, layout)
        const decision = decideLayout(found?.found ?? [], layout)
        if (found === null || decision._tag === "None") {
          return yield* new WorkspaceNotFoundError({ cwd: path.resolve(cwd), ...(layout === null ? {} : { layout }) })
        }
        if (decision._tag === "Ambiguous") return yield* new LayoutError({ root: found.root, found: decision.found })
        const realRoot = yield* fs.realPath(found.root).pipe(Effect.orElseSucceed(() => found.root))
        return make(fs, path, found.root, realRoot, shapes[decision.layout])
      })
    )
}

const isDirectory = (fs: FileSystem.FileSystem, p: string) =>
  fs.stat(p).pipe(
    Effect.map((info) => info.type === "Directory"),
    Effect.orElseSucceed(() => false)
  )

const isFile = (fs: FileSystem.FileSystem, p: string) =>
  fs.stat(p).pipe(
    Effect.map((info) => info.type === "File"),
    Effect.orElseSucceed(() => false)
  )

const listDirectories = (fs: FileSystem.FileSystem, path: Path.Path, dir: string) =>
  fs.readDirectory(dir).pipe(
    Effect.orElseSucceed((): Array<string> => []),
    Effect.flatMap((names) =>
      Effect.filter(names, (name) => isDirectory(fs, path.join(dir, name)), { concurrency: 16 })
    ),
    Effect.map((names) => names.sort())
  )

const isChangeId = Schema.is(ChangeIdSchema)

const make = (fs: FileSystem.FileSystem, path: Path.Path, root: string, realRoot: string, tree: TreeShape): Workspace["Type"] => {
  const at = (relative: string) => path.join(root, ...relative.split("/"))
  const spoolDir = path.join(root, ".spool")
  const changesDir = at(tree.changesDir)
  const modulesDir = tree.modulesDir === null ? null : at(tree.modulesDir)
  const ralphStateDir = at(tree.ralphDir)
  const archiveDir = tree.archiveDir === null ? null : at(tree.archiveDir)
  /** A change's directory name: not the archive, nor a dot-directory. */
  const isChangeDir = (name: string) => path.join(changesDir, name) !== archiveDir && !name.startsWith(".")

  const changeDirectories = listDirectories(fs, path, changesDir).pipe(
    Effect.map((names) => names.filter((name) => isChangeDir(name) && isChangeId(name))),
    Effect.flatMap((names) =>
      Effect.forEach(names, (name) =>
        Effect.map(isFile(fs, path.join(changesDir, name, tree.proposal)), (hasProposal): ChangeDirectory => ({ id: ChangeIdSchema.make(name), hasProposal })))
    )
  )
  const activeChanges = Effect.map(changeDirectories, (dirs) => dirs.filter((dir) => dir.hasProposal).map((dir) => dir.id))

  const archivedChanges = archiveDir === null ? Effect.succeed([]) : listDirectories(fs, path, archiveDir).pipe(
    Effect.map((names) => names.filter((name) => !name.startsWith(".")).sort())
  )

  const findModulePath = (moduleId: ModuleId | null) =>
    Effect.gen(function*() {
      if (moduleId === null || modulesDir === null) return null
      const dirs = yield* listDirectories(fs, path, modulesDir)
      const dir = dirs.find((name) => name === moduleId || name.startsWith(`${moduleId}_`))
      if (dir === undefined) return null
      const file = path.join(modulesDir, dir, "module.md")
      return (yield* isFile(fs, file)) && !(yield* Effect.isFailure(checkInside(file))) ? file : null
    })

  // Symlinks may point anywhere: whatever spool reads or writes must really live under the root.
  const isInside = (real: string, base: string) => real === base || real.startsWith(base.endsWith(path.sep) ? base : base + path.sep)
  const checkInside = (target: string) =>
    Effect.gen(function*() {
      const base = realRoot
      let probe = target
      while (true) {
        const real = yield* fs.realPath(probe).pipe(Effect.option)
        if (real._tag === "Some") {
          if (isInside(real.value, base)) return
          return yield* new StateError({ reason: "Outside", path: target, detail: `it resolves to ${real.value}` })
        }
        const parent = path.dirname(probe)
        if (parent === probe) return
        probe = parent
      }
    })

  const resolveChange = (input: string) =>
    Effect.gen(function*() {
      const trimmed = input.trim()
      const fail = (reason: ChangeError["reason"], input: string, candidates: ReadonlyArray<string> = []) =>
        new ChangeError({ reason, input, candidates, changesDir: tree.changesDir, proposal: tree.proposal })
      if (!isChangeId(trimmed)) return yield* fail("InvalidId", input)
      const all = (yield* listDirectories(fs, path, changesDir)).filter(isChangeDir)
      let id: string
      if (all.includes(trimmed)) {
        id = trimmed
      } else {
        const matches = all.filter((name) => name.startsWith(trimmed))
        if (matches.length === 0) return yield* fail("NotFound", input, yield* activeChanges)
        if (matches.length > 1) return yield* fail("Ambiguous", input, matches)
        id = matches[0]!
      }
      const changeId = ChangeIdSchema.make(id)
      const dir = path.join(changesDir, id)
      if (yield* Effect.isFailure(checkInside(dir))) return yield* fail("Outside", id)
      const proposalPath = path.join(dir, tree.proposal)
      if (!(yield* isFile(fs, proposalPath))) return yield* fail("MissingProposal", id)
      // A tree without modules numbers its changes for themselves (spec-kit's `003-`): no module.
      const moduleId = modulesDir === null ? null : moduleIdOf(id)
      return {
        id: changeId,
        moduleId,
        dir,
        proposalPath,
        tasksPath: path.join(dir, tree.tasks),
        modulePath: yield* findModulePath(moduleId),
        ...(tree.layout === "spool" ? {} : { tree }),
        ...(tree.quoted.length === 0 ? {} : { quoted: tree.quoted.map((doc) => ({ title: doc.title, path: path.join(dir, doc.file) })) })
      } satisfies Change
    })

  const changesWithState = listDirectories(fs, path, ralphStateDir).pipe(
    Effect.map((names) => names.filter(isChangeId).map((name) => ChangeIdSchema.make(name)))
  )

  const stateDir = (changeId: ChangeId) => path.join(ralphStateDir, changeId)

  const makeDirectory = (dir: string) =>
    fs.makeDirectory(dir, { recursive: true }).pipe(
      Effect.mapError((cause) => new StateError({ reason: "Write", path: dir, detail: cause.message }))
    )
  const ignore = (dir: string) =>
    Effect.gen(function*() {
      const ignoreFile = path.join(dir, ".gitignore")
      if (!(yield* isFile(fs, ignoreFile))) {
        yield* writeFileAtomic(fs, path, ignoreFile, "# spool loop state: never committed\n*\n")
      }
    })

  const checked = new Set<string>()
  /**
   * Makes `dir` inside the root, with the ignore files of `ignored`, once per process; again when
   * it has gone since (a person cleaned `.spool/.state` while a sweep ran).
   */
  const ensure = (dir: string, ignored: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      if (checked.has(dir) && (yield* isDirectory(fs, dir))) return dir
      yield* checkInside(dir)
      yield* makeDirectory(dir)
      for (const relative of ignored) yield* ignore(at(relative))
      yield* checkInside(dir)
      checked.add(dir)
      return dir
    })
  const ensureStateDir = (changeId: ChangeId) => ensure(stateDir(changeId), tree.ignoredDirs)
  const ensureWorkDir = ensure(at(WORK_DIR), [WORK_DIR])

  return {
    root,
    spoolDir,
    tree,
    activeChanges,
    changeDirectories,
    archivedChanges,
    resolveChange,
    stateDir,
    ensureStateDir,
    ensureWorkDir,
    changesWithState
  }
}
