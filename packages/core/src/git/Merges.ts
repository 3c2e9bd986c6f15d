import { Context, type Effect } from "effect"
import type { GitError } from "./GitSummary.js"

/**
 * What became of bringing a change's branch home. Only `Merged` moved the base branch; every other
 * ending left the base, the person's work tree and the change's branch as they were.
 */
export type MergeResult =
  | {
    readonly _tag: "Merged"
    /** The base branch's new tip. */
    readonly commit: string
    /** The base is checked out in a work tree that moved with it, or in none. */
    readonly workTree: "moved" | "none"
  }
  | { readonly _tag: "AlreadyMerged" }
  | { readonly _tag: "Conflict"; readonly paths: ReadonlyArray<string> }
  | { readonly _tag: "ChecksFailed"; readonly check: string }
  | { readonly _tag: "BaseMoved" }
  | { readonly _tag: "WorkTreeDirty"; readonly path: string }

const listed = (paths: ReadonlyArray<string>, shown = 3) =>
  paths.length <= shown ? paths.join(", ") : `${paths.slice(0, shown).join(", ")} and ${paths.length - shown} more`

/** What a sweep's summary says of a merge: `merged (1a2b3c4d)`, `not merged: conflict in src/app.ts`. */
export const describeMerge = (result: MergeResult, base: string): string => {
  switch (result._tag) {
    case "Merged":
      return `merged into ${base} (${result.commit.slice(0, 8)})`
    case "AlreadyMerged":
      return `already in ${base}`
    case "Conflict":
      return `not merged: conflict in ${listed(result.paths)}`
    case "ChecksFailed":
      return `not merged: ${result.check} failed on the merged tree`
    case "BaseMoved":
      return `not merged: ${base} moved meanwhile and cannot be fast-forwarded`
    case "WorkTreeDirty":
      return `not merged: ${base} is checked out in ${result.path} with uncommitted changes; commit or stash them and merge by hand`
  }
}

export interface MergeRequest<E> {
  /** The directory holding `.spool/` in the main work tree. */
  readonly root: string
  /** The change's branch (`spool/<change-id>`). */
  readonly branch: string
  /** The branch to bring it into: the one the sweep started from. */
  readonly base: string
  /** The project's checks on the merged tree, run in `cwd`: null when they pass, else the check that failed. */
  readonly check: (cwd: string) => Effect.Effect<string | null, E>
}

/**
 * Brings a change's branch into the base branch: merged in a worktree of its own, checked there,
 * and only then the base moved, as a fast-forward (with the work tree that has it checked out, when
 * that tree is clean). The person's own work tree is never left conflicted or half-merged.
 */
export class Merges extends Context.Tag("@spool/core/Merges")<Merges, {
  /** The branch checked out in the work tree holding `root`: the base a sweep merges into (null: a detached HEAD, or no repository). */
  readonly currentBranch: (root: string) => Effect.Effect<string | null, GitError>
  readonly merge: <E>(request: MergeRequest<E>) => Effect.Effect<MergeResult, GitError | E>
}>() {}
