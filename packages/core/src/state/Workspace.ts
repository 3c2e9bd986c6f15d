import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { writeFileAtomic } from "./AtomicFile.js"
import { StateError } from "./StateError.js"
import { type ChangeId, ChangeId as ChangeIdSchema, type ModuleId, moduleIdOf } from "../domain/Domain.js"

/** No `.spool/` directory in the current directory or any ancestor. */
export class WorkspaceNotFoundError extends Schema.TaggedError<WorkspaceNotFoundError>()("WorkspaceNotFoundError", {
  cwd: Schema.String
}) {
  override get message() {
    return `no .spool/ directory found in ${this.cwd} or any parent directory; run spool inside a spool repository`
  }
}

/** `--change` names no usable change. */
export class ChangeError extends Schema.TaggedError<ChangeError>()("ChangeError", {
  reason: Schema.Literal("InvalidId", "NotFound", "Ambiguous", "MissingProposal", "Outside"),
  input: Schema.String,
  candidates: Schema.Array(Schema.String)
}) {
  override get message() {
    const list = (ids: ReadonlyArray<string>) => (ids.length === 0 ? "none" : ids.join(", "))
    switch (this.reason) {
      case "InvalidId":
        return `invalid change id '${this.input}': use the name of a directory under .spool/changes/ (no '/', '\\' or '..')`
      case "NotFound":
        return `unknown change '${this.input}'; active changes: ${list(this.candidates)}`
      case "Ambiguous":
        return `change '${this.input}' is ambiguous; it matches: ${list(this.candidates)}; give more of the id`
      case "Outside":
        return `change '${this.input}' leads outside the repository (a symlink?); spool only works on changes inside it`
      case "MissingProposal":
        return `change '${this.input}' has no proposal.md; add .spool/changes/${this.input}/proposal.md or pick another change`
    }
  }
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
}

export class Workspace extends Context.Tag("@spool/core/Workspace")<Workspace, {
  /** The directory holding `.spool/` (the repository root for spool). */
  readonly root: string
  readonly spoolDir: string
  /** Directories under `.spool/changes/` with a `proposal.md`, excluding `archive/` and dot-directories, sorted. */
  readonly activeChanges: Effect.Effect<ReadonlyArray<ChangeId>>
  /** The directories under `.spool/changes/archive/` (archived changes, often named `<date>-<change-id>`), sorted. */
  readonly archivedChanges: Effect.Effect<ReadonlyArray<string>>
  /** An exact change id or a unique prefix of one. */
  readonly resolveChange: (input: string) => Effect.Effect<Change, ChangeError>
  /** `.spool/.state/ralph/<change-id>/` */
  readonly stateDir: (changeId: ChangeId) => string
  /** Creates the state directory (and `.spool/.state/.gitignore`, so state never reaches a commit). */
  readonly ensureStateDir: (changeId: ChangeId) => Effect.Effect<string, StateError>
  /** Change ids that have a state directory. */
  readonly changesWithState: Effect.Effect<ReadonlyArray<ChangeId>>
}>() {
  /** Finds `.spool/` in `cwd` or its nearest ancestor, as git finds `.git`. */
  static readonly layer = (cwd: string) =>
    Layer.effect(
      Workspace,
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const root = yield* findRoot(fs, path, path.resolve(cwd))
        const realRoot = yield* fs.realPath(root).pipe(Effect.orElseSucceed(() => root))
        return make(fs, path, root, realRoot)
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

const findRoot = (fs: FileSystem.FileSystem, path: Path.Path, cwd: string) =>
  Effect.gen(function*() {
    let dir = cwd
    while (true) {
      if (yield* isDirectory(fs, path.join(dir, ".spool"))) return dir
      const parent = path.dirname(dir)
      if (parent === dir) return yield* new WorkspaceNotFoundError({ cwd })
      dir = parent
    }
  })

const listDirectories = (fs: FileSystem.FileSystem, path: Path.Path, dir: string) =>
  fs.readDirectory(dir).pipe(
    Effect.orElseSucceed((): Array<string> => []),
    Effect.flatMap((names) =>
      Effect.filter(names, (name) => isDirectory(fs, path.join(dir, name)), { concurrency: 16 })
    ),
    Effect.map((names) => names.sort())
  )

const isChangeId = Schema.is(ChangeIdSchema)

const make = (fs: FileSystem.FileSystem, path: Path.Path, root: string, realRoot: string): Workspace["Type"] => {
  const spoolDir = path.join(root, ".spool")
  const changesDir = path.join(spoolDir, "changes")
  const modulesDir = path.join(spoolDir, "modules")
  const ralphStateDir = path.join(spoolDir, ".state", "ralph")

  const activeChanges = listDirectories(fs, path, changesDir).pipe(
    Effect.map((names) => names.filter((name) => name !== "archive" && !name.startsWith(".") && isChangeId(name))),
    Effect.flatMap((names) => Effect.filter(names, (name) => isFile(fs, path.join(changesDir, name, "proposal.md")))),
    Effect.map((names) => names.map((name) => ChangeIdSchema.make(name)))
  )

  const archivedChanges = listDirectories(fs, path, path.join(changesDir, "archive")).pipe(
    Effect.map((names) => names.filter((name) => !name.startsWith(".")).sort())
  )

  const findModulePath = (moduleId: ModuleId | null) =>
    Effect.gen(function*() {
      if (moduleId === null) return null
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
      if (!isChangeId(trimmed)) {
        return yield* new ChangeError({ reason: "InvalidId", input, candidates: [] })
      }
      const all = (yield* listDirectories(fs, path, changesDir)).filter(
        (name) => name !== "archive" && !name.startsWith(".")
      )
      let id: string
      if (all.includes(trimmed)) {
        id = trimmed
      } else {
        const matches = all.filter((name) => name.startsWith(trimmed))
        if (matches.length === 0) {
          return yield* new ChangeError({ reason: "NotFound", input, candidates: yield* activeChanges })
        }
        if (matches.length > 1) {
          return yield* new ChangeError({ reason: "Ambiguous", input, candidates: matches })
        }
        id = matches[0]!
      }
      const changeId = ChangeIdSchema.make(id)
      const dir = path.join(changesDir, id)
      if (yield* Effect.isFailure(checkInside(dir))) {
        return yield* new ChangeError({ reason: "Outside", input: id, candidates: [] })
      }
      const proposalPath = path.join(dir, "proposal.md")
      if (!(yield* isFile(fs, proposalPath))) {
        return yield* new ChangeError({ reason: "MissingProposal", input: id, candidates: [] })
      }
      const moduleId = moduleIdOf(id)
      return {
        id: changeId,
        moduleId,
        dir,
        proposalPath,
        tasksPath: path.join(dir, "tasks.md"),
        modulePath: yield* findModulePath(moduleId)
      } satisfies Change
    })

  const changesWithState = listDirectories(fs, path, ralphStateDir).pipe(
    Effect.map((names) => names.filter(isChangeId).map((name) => ChangeIdSchema.make(name)))
  )

  const stateDir = (changeId: ChangeId) => path.join(ralphStateDir, changeId)
  const stateRoot = path.join(spoolDir, ".state")
  const ignoreFile = path.join(stateRoot, ".gitignore")

  const checked = new Set<string>()
  const ensureStateDir = (changeId: ChangeId) =>
    Effect.gen(function*() {
      const dir = stateDir(changeId)
      if (checked.has(dir)) return dir
      yield* checkInside(dir)
      yield* fs.makeDirectory(dir, { recursive: true }).pipe(
        Effect.mapError((cause) => new StateError({ reason: "Write", path: dir, detail: cause.message }))
      )
      if (!(yield* isFile(fs, ignoreFile))) {
        yield* writeFileAtomic(fs, path, ignoreFile, "# spool loop state: never committed\n*\n")
      }
      yield* checkInside(dir)
      checked.add(dir)
      return dir
    })

  return {
    root,
    spoolDir,
    activeChanges,
    archivedChanges,
    resolveChange,
    stateDir,
    ensureStateDir,
    changesWithState
  }
}
