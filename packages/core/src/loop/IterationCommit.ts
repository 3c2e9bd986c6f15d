import { Effect, Ref } from "effect"
import type { GitChangeSummary } from "../domain/Domain.js"
import { type GitSnapshot, GitSummary } from "../git/GitSummary.js"
import { isTreePath } from "../tree/Layout.js"
import { treeOf } from "../state/Workspace.js"
import type { LoopInputs } from "./LoopInputs.js"
import type { LoopRequest } from "./LoopRequest.js"

/** `a.ts, b.ts and 3 more`. */
export const listPaths = (paths: ReadonlyArray<string>, shown = 5) =>
  paths.length <= shown ? paths.join(", ") : `${paths.slice(0, shown).join(", ")} and ${paths.length - shown} more`

/** What measuring and committing an iteration's work reads, and keeps up to date from one iteration to the next. */
export interface WorkTree {
  readonly input: LoopRequest
  readonly inputs: LoopInputs
  /** The work tree as the last iteration left it (null: take a snapshot). */
  readonly lastSnapshot: Ref.Ref<GitSnapshot | null>
  /** Paths that held uncommitted work when the loop started and no iteration has committed since. */
  readonly ownerWork: Ref.Ref<ReadonlySet<string>>
  /** Paths the loop changed whose commit failed: the next commit takes them too. */
  readonly uncommitted: Ref.Ref<ReadonlyArray<string>>
}

/**
 * Commits what the iteration changed, and only that (with what an earlier failed commit left):
 * the owner's uncommitted work stays out, unless the agent edited the same file, which is then
 * committed whole with a warning naming it.
 */
const commitWork = (ctx: WorkTree, iteration: number, paths: ReadonlyArray<string>, warnings: Array<string>) =>
  Effect.gen(function*() {
    const git = yield* GitSummary
    const pending = yield* Ref.get(ctx.uncommitted)
    const all = pending.length === 0 ? paths : [...new Set([...pending, ...paths])]
    if (all.length === 0) return null
    const made = yield* Effect.either(git.commit(`spool ralph: ${ctx.input.change.id} iteration ${iteration}`, all))
    if (made._tag === "Left") {
      warnings.push(`auto-commit failed: ${made.left.detail}`)
      yield* Ref.set(ctx.uncommitted, all)
      return null
    }
    yield* Ref.set(ctx.uncommitted, [])
    if (made.right !== null) {
      const owners = yield* Ref.get(ctx.ownerWork)
      const mixed = all.filter((path) => owners.has(path))
      if (mixed.length > 0) {
        const shown = mixed.filter((path) => !isTreePath(treeOf(ctx.input.change), path))
        if (shown.length > 0) {
          warnings.push(
            `committed ${listPaths(shown)} with iteration ${iteration}: the agent edited ${shown.length === 1 ? "a file" : "files"} ` +
              "that already held uncommitted changes from before the loop started, so those changes are in this commit too"
          )
        }
        const committed = new Set(all)
        yield* Ref.set(ctx.ownerWork, new Set([...owners].filter((path) => !committed.has(path))))
      }
    }
    return made.right
  })

/** What the agent changed in one iteration, and the commit of it. */
export interface IterationWork {
  /** What changed, when git could say. */
  readonly summary: GitChangeSummary | null
  readonly commit: string | null
  /** Whether git said what changed: the work tree after it is then the next iteration's start. */
  readonly measured: boolean
  readonly warnings: ReadonlyArray<string>
}

/**
 * Measures what the agent changed since `before` and commits it (with `--commit`); an interrupted
 * iteration is not measured. The work tree it leaves is the next iteration's start.
 */
export const measureAndCommit = (ctx: WorkTree, iteration: number, before: GitSnapshot | null, interrupted: boolean) =>
  Effect.gen(function*() {
    const git = yield* GitSummary
    const changed = interrupted ? null : yield* ctx.inputs.gitOrWarn(git.changesSince(before), null)
    yield* Ref.set(ctx.lastSnapshot, changed?.after ?? null)
    const warnings: Array<string> = []
    const commit = ctx.input.options.commit && changed !== null ? yield* commitWork(ctx, iteration, changed.paths, warnings) : null
    return { summary: changed?.summary ?? null, commit, measured: changed !== null, warnings } satisfies IterationWork
  })
