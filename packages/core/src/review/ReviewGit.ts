import { Context, Effect, Layer, type Scope } from "effect"
import type { GitError, GitSnapshot } from "../git/GitSummary.js"
import type { FileDiff } from "./ReviewDiff.js"

/** What a review needs of git: the run's work as a diff, and a throwaway work tree of it. */
// Stryker disable next-line StringLiteral: the key only tells services apart in a context, and no other service has an empty one
export class ReviewGit extends Context.Tag("@spool/core/ReviewGit")<ReviewGit, {
  /** What changed from `from` to `to` (work-tree snapshots), file by file. */
  readonly diff: (from: GitSnapshot, to: GitSnapshot) => Effect.Effect<ReadonlyArray<FileDiff>, GitError>
  /**
   * A new work tree holding exactly `at`, outside the loop's, on no branch; removed, with whatever
   * was written in it, when the scope closes. Its path.
   */
  readonly checkout: (at: GitSnapshot) => Effect.Effect<string, GitError, Scope.Scope>
}>() {
  /**
   * For loop tests: the diff is `files`; a checkout is `/review/<n>`, and `trees` is told of each
   * made and removed (`+/review/1`, `-/review/1`).
   */
  static readonly layerTest = (files: ReadonlyArray<FileDiff> = [], trees: Array<string> = []) =>
    Layer.sync(ReviewGit, () => {
      let made = 0
      return {
        diff: () => Effect.succeed(files),
        checkout: () =>
          Effect.acquireRelease(
            Effect.sync(() => {
              const path = `/review/${++made}`
              trees.push(`+${path}`)
              return path
            }),
            (path) => Effect.sync(() => trees.push(`-${path}`))
          )
      }
    })
}
