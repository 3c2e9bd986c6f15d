import { branchOf, type GitError, Merges, type OpenWorktree, type RemoveWorktree, type Worktree, WorktreeError, Worktrees } from "@spool/core"
import { Context, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as GitCommand from "./GitCommand.js"
import { currentBranch, merge } from "./GitMerge.js"
import { parseWorktreeList, type WorktreeEntry } from "./GitOutput.js"

/** `<root>/.spool/.state/worktrees/<change-id>`: under the state directory, which git ignores. */
export const directoryOf = (root: string, changeId: string) => Path.join(root, ".spool", ".state", "worktrees", changeId)

interface Repository {
  readonly git: GitCommand.GitCommand
  /** `.spool/`'s directory relative to the repository's top (`""` at the top, else ending in `/`). */
  readonly prefix: string
  /** `directoryOf(root)` with symlinks resolved, as git reports worktree paths. */
  readonly target: string
}

const realPath = (path: string) => {
  try {
    return Fs.realpathSync(path)
  } catch {
    return path
  }
}

const openRepository = (root: string, changeId: string) =>
  Effect.gen(function*() {
    const notARepository = new WorktreeError({ reason: "NotARepository", changeId, path: root, detail: "" })
    const git = yield* GitCommand.make(root).pipe(Effect.mapError(() => notARepository))
    const output = yield* git.run("worktree", ["rev-parse", "--is-inside-work-tree", "--show-prefix"]).pipe(
      Effect.mapError(() => notARepository)
    )
    const [inside, prefix = ""] = output.split("\n")
    if (inside !== "true") return yield* notARepository
    return { git, prefix, target: directoryOf(realPath(root), changeId) } satisfies Repository
  })

const worktrees = (git: GitCommand.GitCommand) =>
  Effect.map(git.run("worktree", ["worktree", "list", "--porcelain"]), parseWorktreeList)

const isGone = (entry: WorktreeEntry) => entry.prunable || !Fs.existsSync(entry.path)

const refOf = (changeId: string) => `refs/heads/${branchOf(changeId)}`

/**
 * The change's worktree on branch `spool/<change-id>`: reused when it exists, else made (the branch
 * from HEAD the first time). `requires` are paths relative to `root` the checkout must hold;
 * `prepare` runs once everything is checked, just before a worktree is made.
 */
export const open = <E = never>(input: OpenWorktree<E>): Effect.Effect<Worktree, WorktreeError | GitError | E> =>
  Effect.gen(function*() {
    const { changeId } = input
    const { git, prefix, target } = yield* openRepository(input.root, changeId)
    const branch = branchOf(changeId)
    const fail = (reason: WorktreeError["reason"], path: string, detail = "") =>
      new WorktreeError({ reason, changeId, path, detail, ...(input.changeDir === undefined ? {} : { changeDir: input.changeDir }) })
    const made = (created: boolean): Worktree => ({ path: target, root: Path.resolve(target, prefix), branch, created })

    const entries = yield* worktrees(git)
    const here = entries.find((entry) => entry.path === target)
    if (here !== undefined) {
      if (isGone(here)) return yield* fail("Missing", target)
      if (here.branch !== refOf(changeId)) {
        return yield* fail("WrongBranch", target, here.branch?.replace(/^refs\/heads\//, "") ?? "a detached HEAD")
      }
      const missing = input.requires.find((file) => !Fs.existsSync(Path.join(target, prefix, file)))
      if (missing !== undefined) return yield* fail("NotCommitted", target, `${missing} is not on branch ${branch}`)
      return made(false)
    }
    const elsewhere = entries.find((entry) => entry.branch === refOf(changeId))
    if (elsewhere !== undefined) return yield* fail(isGone(elsewhere) ? "Missing" : "CheckedOutElsewhere", elsewhere.path)
    if (Fs.existsSync(target)) return yield* fail("Occupied", target)

    const branchExists = (yield* git.runOrNull("worktree", ["rev-parse", "--verify", "-q", refOf(changeId)])) !== null
    if (!branchExists && (yield* git.runOrNull("worktree", ["rev-parse", "--verify", "-q", "HEAD"])) === null) {
      return yield* fail("NoCommit", target)
    }
    const start = branchExists ? refOf(changeId) : "HEAD"
    for (const file of input.requires) {
      // `<rev>:./<path>` is relative to the directory git runs in, the one holding `.spool/`.
      const present = yield* git.runOrNull("worktree", ["cat-file", "-e", `${start}:./${file}`]).pipe(
        Effect.orElseSucceed(() => null)
      )
      if (present === null) {
        return yield* fail("NotCommitted", target, `${file} is not ${branchExists ? `on branch ${branch}` : "committed in HEAD"}`)
      }
    }
    if (input.prepare !== undefined) yield* input.prepare
    const relativeTarget = Path.relative(realPath(input.root), target)
    if ((yield* git.runOrNull("worktree", ["check-ignore", "-q", "--", relativeTarget])) === null) {
      return yield* fail("NotIgnored", target)
    }
    yield* git.runQuiet(
      "worktree",
      branchExists ? ["worktree", "add", "--quiet", target, branch] : ["worktree", "add", "--quiet", "-b", branch, target, "HEAD"]
    )
    return made(true)
  })

/** Removes the change's worktree when it holds no uncommitted work; its branch stays. */
export const remove = (input: RemoveWorktree): Effect.Effect<Worktree, WorktreeError | GitError> =>
  Effect.gen(function*() {
    const { changeId } = input
    const { git, prefix, target } = yield* openRepository(input.root, changeId)
    const fail = (reason: WorktreeError["reason"], detail = "") => new WorktreeError({ reason, changeId, path: target, detail })
    const here = (yield* worktrees(git)).find((entry) => entry.path === target)
    if (here === undefined) return yield* fail("NotFound")
    if (isGone(here)) return yield* fail("Missing")
    const inWorktree = yield* GitCommand.make(target)
    const dirty = (yield* inWorktree.run("worktree", ["status", "--porcelain", "-z"])).split("\0").filter((line) => line !== "")
    if (dirty.length > 0) return yield* fail("Uncommitted", `${dirty.length} file${dirty.length === 1 ? "" : "s"}`)
    yield* git.runQuiet("worktree", ["worktree", "remove", target])
    return { path: target, root: Path.resolve(target, prefix), branch: branchOf(changeId), created: false }
  })

/**
 * The changes' worktrees and their merges, made with git. Whatever adds or removes a worktree runs
 * one at a time in this process: git's bookkeeping of worktrees is not made for two writers at once.
 */
export const layer = Layer.effectContext(
  Effect.gen(function*() {
    const one = yield* Effect.makeSemaphore(1)
    const bookkeeping = <A, E>(step: Effect.Effect<A, E>) => one.withPermits(1)(step)
    return Context.make(Worktrees, {
      open: (request) => bookkeeping(open(request)),
      remove: (request) => bookkeeping(remove(request))
    }).pipe(Context.add(Merges, { currentBranch, merge: merge(bookkeeping) }))
  })
)

export { branchOf, type Worktree, WorktreeError }
