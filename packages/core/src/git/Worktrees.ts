import { Context, Effect, Layer, Ref, Schema } from "effect"
import type { GitError } from "./GitSummary.js"

/** The branch a change's loop works on in its worktree. */
export const branchOf = (changeId: string) => `spool/${changeId}`

/** A change's worktree cannot be made, reused or removed as asked; the message says what to do. */
export class WorktreeError extends Schema.TaggedError<WorktreeError>()("WorktreeError", {
  reason: Schema.Literal(
    "NotARepository",
    "NoCommit",
    "NotCommitted",
    "CheckedOutElsewhere",
    "WrongBranch",
    "Missing",
    "Occupied",
    "NotIgnored",
    "NotFound",
    "Uncommitted"
  ),
  changeId: Schema.String,
  /** The worktree directory, or for `CheckedOutElsewhere` the worktree holding the branch. */
  path: Schema.String,
  detail: Schema.String,
  /** The change's directory relative to the root, for the hint to commit it (`.spool/changes/<id>` unless said). */
  changeDir: Schema.optional(Schema.String)
}) {
  override get message() {
    const branch = branchOf(this.changeId)
    switch (this.reason) {
      case "NotARepository":
        return `--worktree needs a git repository, and ${this.path} is not inside one; run git init and commit, or run without --worktree`
      case "NoCommit":
        return `--worktree checks out the current commit, and the repository has none yet; commit the change first`
      case "NotCommitted":
        return `${this.detail}, and the worktree is a checkout of it; commit the change first (git add ${this.changeDir ?? `.spool/changes/${this.changeId}`} && git commit)`
      case "CheckedOutElsewhere":
        return `branch ${branch} is checked out in another worktree, ${this.path}; a branch lives in one worktree at a time: remove that one (git worktree remove ${this.path}) or switch it to another branch`
      case "WrongBranch":
        return `the worktree ${this.path} has ${this.detail} checked out, not ${branch}; check out ${branch} there, or remove it with git worktree remove ${this.path}`
      case "Missing":
        return `the worktree of ${this.changeId} at ${this.path} is gone (deleted by hand?); run git worktree prune to forget it, then start again: branch ${branch} keeps its commits`
      case "Occupied":
        return `${this.path} exists but is not a worktree of this repository; move it away and start again`
      case "NotIgnored":
        return `${this.path} would show in git status; add a line '*' to .spool/.state/.gitignore and start again`
      case "NotFound":
        return `change ${this.changeId} has no worktree at ${this.path}; nothing to remove`
      case "Uncommitted":
        return `the worktree ${this.path} holds uncommitted work (${this.detail}); commit or discard it there first; nothing was removed`
    }
  }
}

/** A change's worktree: its directory, the directory holding `.spool/` in it, its branch. */
export interface Worktree {
  readonly path: string
  /** Where `.spool/` is in the worktree: `path`, or a subdirectory when `.spool/` is not at the repository's top. */
  readonly root: string
  readonly branch: string
  /** Made now (true) or reused from an earlier run (false). */
  readonly created: boolean
}

export interface OpenWorktree<E> {
  /** The directory holding `.spool/` in the main work tree. */
  readonly root: string
  readonly changeId: string
  /** Paths relative to `root` the checkout must hold (the change's proposal, its module). */
  readonly requires: ReadonlyArray<string>
  /** The change's directory relative to `root`, for the hint to commit it. */
  readonly changeDir?: string
  /** Runs once everything is checked, just before a worktree is made: a refusal writes nothing. */
  readonly prepare?: Effect.Effect<unknown, E>
}

export interface RemoveWorktree {
  readonly root: string
  readonly changeId: string
}

interface WorktreeOperations {
  /** The change's worktree on branch `spool/<change-id>`: reused when it exists, else made (the branch from HEAD the first time). */
  readonly open: <E = never>(request: OpenWorktree<E>) => Effect.Effect<Worktree, WorktreeError | GitError | E>
  /** Removes the change's worktree when it holds no uncommitted work; its branch stays. */
  readonly remove: (request: RemoveWorktree) => Effect.Effect<Worktree, WorktreeError | GitError>
}

/**
 * The changes' worktrees. Loops of one process open and remove them one at a time: git's own
 * bookkeeping of worktrees (`.git/worktrees/`, the config) is not made for two writers at once.
 */
export class Worktrees extends Context.Tag("@spool/core/Worktrees")<Worktrees, WorktreeOperations>() {
  /** `operations` made one at a time, whichever loop calls them. */
  static readonly serialised = (operations: WorktreeOperations): Effect.Effect<WorktreeOperations> =>
    Effect.map(Effect.makeSemaphore(1), (one) => ({
      open: (request) => one.withPermits(1)(operations.open(request)),
      remove: (request) => one.withPermits(1)(operations.remove(request))
    }))

  /**
   * Worktrees kept in memory, one directory each under `<root>/.spool/.state/worktrees/`: made on
   * the first open, reused after, refused (`Uncommitted`) for the changes in `dirty`.
   */
  static readonly layerTest = (options: { readonly dirty?: ReadonlyArray<string> } = {}) =>
    Layer.effect(
      Worktrees,
      Effect.gen(function*() {
        const made = yield* Ref.make<ReadonlyMap<string, Worktree>>(new Map())
        const directory = (root: string, changeId: string) => `${root}/.spool/.state/worktrees/${changeId}`
        return yield* Worktrees.serialised({
          open: (request) =>
            Effect.gen(function*() {
              const known = (yield* Ref.get(made)).get(request.changeId)
              if (known !== undefined) return { ...known, created: false }
              if (request.prepare !== undefined) yield* request.prepare
              const path = directory(request.root, request.changeId)
              const worktree: Worktree = { path, root: path, branch: branchOf(request.changeId), created: true }
              yield* Ref.update(made, (all) => new Map([...all, [request.changeId, worktree]]))
              return worktree
            }),
          remove: ({ changeId, root }) =>
            Effect.gen(function*() {
              const path = directory(root, changeId)
              const known = (yield* Ref.get(made)).get(changeId)
              if (known === undefined) return yield* new WorktreeError({ reason: "NotFound", changeId, path, detail: "" })
              if (options.dirty?.includes(changeId) === true) {
                return yield* new WorktreeError({ reason: "Uncommitted", changeId, path, detail: "1 file" })
              }
              yield* Ref.update(made, (all) => new Map([...all].filter(([id]) => id !== changeId)))
              return { ...known, created: false }
            })
        })
      })
    )
}
