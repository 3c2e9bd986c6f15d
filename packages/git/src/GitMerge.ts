import type { GitError, MergeRequest, MergeResult } from "@spool/core"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as GitCommand from "./GitCommand.js"
import { parseWorktreeList } from "./GitOutput.js"

const realPath = (path: string) => {
  try {
    return Fs.realpathSync(path)
  } catch {
    return path
  }
}

/** `<root>/.spool/.state/merges/<name>`: where a merge is made, under the state directory git ignores. */
const scratchOf = (root: string, branch: string) =>
  Path.join(root, ".spool", ".state", "merges", branch.replace(/[^A-Za-z0-9._-]+/g, "-"))

const lines = (output: string) => output.split("\n").filter((line) => line !== "")

/**
 * Brings `request.branch` into `request.base`, as `Merges.merge` describes. `bookkeeping` runs the
 * steps that add or remove a worktree, one at a time with the loops' own.
 */
export const merge = (bookkeeping: <A, E>(step: Effect.Effect<A, E>) => Effect.Effect<A, E>) =>
<E>(request: MergeRequest<E>): Effect.Effect<MergeResult, GitError | E> =>
  Effect.gen(function*() {
    const git = yield* GitCommand.make(request.root)
    const baseRef = `refs/heads/${request.base}`
    const baseTip = (yield* git.run("merge", ["rev-parse", "--verify", baseRef])).trim()
    const branchTip = (yield* git.run("merge", ["rev-parse", "--verify", `refs/heads/${request.branch}`])).trim()
    if ((yield* git.runOrNull("merge", ["merge-base", "--is-ancestor", branchTip, baseTip])) !== null) {
      return { _tag: "AlreadyMerged" } satisfies MergeResult
    }

    const scratch = scratchOf(realPath(request.root), request.branch)
    const merged = yield* Effect.acquireUseRelease(
      bookkeeping(Effect.gen(function*() {
        yield* Effect.sync(() => Fs.rmSync(scratch, { recursive: true, force: true }))
        yield* git.runQuiet("merge", ["worktree", "prune"])
        yield* git.runQuiet("merge", ["worktree", "add", "--quiet", "--detach", scratch, baseTip])
        return yield* GitCommand.make(scratch)
      })),
      (inScratch) =>
        Effect.gen(function*() {
          const message = `Merge branch '${request.branch}' into ${request.base}`
          const attempt = yield* inScratch.runOrNull("merge", ["merge", "--no-edit", "-m", message, branchTip])
          if (attempt === null) {
            const conflicted = lines(yield* inScratch.run("merge", ["diff", "--name-only", "--diff-filter=U"]))
            return { _tag: "Conflict", paths: conflicted } satisfies MergeResult
          }
          const failed = yield* request.check(scratch)
          if (failed !== null) return { _tag: "ChecksFailed", check: failed } satisfies MergeResult
          return (yield* inScratch.run("merge", ["rev-parse", "HEAD"])).trim()
        }),
      () =>
        bookkeeping(
          git.runQuiet("merge", ["worktree", "remove", "--force", scratch]).pipe(
            Effect.orElse(() => Effect.sync(() => Fs.rmSync(scratch, { recursive: true, force: true }))),
            Effect.zipRight(git.runQuiet("merge", ["worktree", "prune"])),
            Effect.ignore
          )
        )
    )
    if (typeof merged !== "string") return merged

    // The base moves only as a fast-forward from where the merge started, with the work tree that has it.
    const checkedOut = parseWorktreeList(yield* git.run("merge", ["worktree", "list", "--porcelain"]))
      .find((entry) => entry.branch === baseRef && !entry.prunable)
    if (checkedOut === undefined) {
      const moved = yield* git.runOrNull("merge", ["update-ref", "-m", `spool: ${request.branch}`, baseRef, merged, baseTip])
      return moved === null ? { _tag: "BaseMoved" } satisfies MergeResult : { _tag: "Merged", commit: merged, workTree: "none" }
    }
    const inWorkTree = yield* GitCommand.make(checkedOut.path)
    const dirty = lines(yield* inWorkTree.run("merge", ["status", "--porcelain", "--untracked-files=no"]))
    if (dirty.length > 0) return { _tag: "WorkTreeDirty", path: checkedOut.path } satisfies MergeResult
    const head = (yield* inWorkTree.run("merge", ["rev-parse", "HEAD"])).trim()
    if (head !== baseTip) return { _tag: "BaseMoved" } satisfies MergeResult
    const forward = yield* Effect.either(inWorkTree.runQuiet("merge", ["merge", "--ff-only", "--quiet", merged]))
    if (forward._tag === "Left") {
      // A commit made meanwhile moved the base; else the work tree holds what the merge would overwrite.
      const now = (yield* inWorkTree.run("merge", ["rev-parse", "HEAD"])).trim()
      return now !== baseTip ? { _tag: "BaseMoved" } : { _tag: "WorkTreeDirty", path: checkedOut.path }
    }
    return { _tag: "Merged", commit: merged, workTree: "moved" } satisfies MergeResult
  })

/** The branch checked out in the work tree holding `root`; null for a detached HEAD or outside a repository. */
export const currentBranch = (root: string): Effect.Effect<string | null, GitError> =>
  Effect.gen(function*() {
    const git = yield* Effect.option(GitCommand.make(root))
    if (git._tag === "None") return null
    const inside = yield* Effect.option(git.value.run("merge", ["rev-parse", "--is-inside-work-tree"]))
    if (inside._tag === "None" || inside.value.trim() !== "true") return null
    const branch = yield* git.value.runOrNull("merge", ["symbolic-ref", "--quiet", "--short", "HEAD"])
    return branch === null ? null : branch.trim()
  })
