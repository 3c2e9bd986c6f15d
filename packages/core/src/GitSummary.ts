import { Context, Effect, Layer, Ref, Schema } from "effect"
import type { CommitInfo, GitChangeSummary } from "./Domain.js"

export class GitError extends Schema.TaggedError<GitError>()("GitError", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `git ${this.operation} failed: ${this.detail}`
  }
}

/** The state of the work tree at a moment (a tree object), to diff an iteration against. Opaque to the loop. */
export interface GitSnapshot {
  readonly tree: string
}

/** What changed since a snapshot, and the snapshot taken to find out (the next iteration starts from it). */
export interface GitChange {
  readonly summary: GitChangeSummary
  readonly after: GitSnapshot
}

export interface RecentCommitsOptions {
  readonly count: number
  readonly includeMerges: boolean
}

/**
 * What an iteration changed in the repository, auto-commit, and recent history.
 * Outside a git repository `repository` is false: snapshots are null, summaries null, no commits.
 */
export class GitSummary extends Context.Tag("@spool/core/GitSummary")<GitSummary, {
  readonly repository: boolean
  /** The work tree now (tracked and untracked, `.spool/.state/` excluded). */
  readonly snapshot: Effect.Effect<GitSnapshot | null, GitError>
  /** What changed since `before`: work-tree changes and commits made meanwhile, not what was dirty already. */
  readonly changesSince: (before: GitSnapshot | null) => Effect.Effect<GitChange | null, GitError>
  /** Stages everything and commits; the new commit's hash, or null when there was nothing to commit. */
  readonly commitAll: (message: string) => Effect.Effect<string | null, GitError>
  /** The last commits, newest first. */
  readonly recentCommits: (options: RecentCommitsOptions) => Effect.Effect<ReadonlyArray<CommitInfo>, GitError>
}>() {
  /** Outside a repository. */
  static readonly layerNone = Layer.succeed(GitSummary, {
    repository: false,
    snapshot: Effect.succeed(null),
    changesSince: () => Effect.succeed(null),
    commitAll: () => Effect.succeed(null),
    recentCommits: () => Effect.succeed([])
  })

  /** A scripted repository for loop tests: each `changesSince` takes the next summary; commits get fake hashes. */
  static readonly layerTest = (options: {
    readonly changes?: ReadonlyArray<GitChangeSummary>
    readonly commits?: ReadonlyArray<CommitInfo>
    /** Receives the options of every `recentCommits` call. */
    readonly historyCalls?: Array<RecentCommitsOptions>
  } = {}) =>
    Layer.effect(
      GitSummary,
      Effect.gen(function*() {
        const changes = yield* Ref.make(options.changes ?? [])
        const made = yield* Ref.make(0)
        const empty: GitChangeSummary = { changedFiles: 0, files: [], insertions: 0, deletions: 0 }
        return {
          repository: true,
          snapshot: Effect.succeed({ tree: "test-tree" }),
          changesSince: () =>
            Ref.modify(changes, ([next, ...rest]) => [{ summary: next ?? empty, after: { tree: "test-tree" } }, rest] as const),
          commitAll: () => Ref.updateAndGet(made, (n) => n + 1).pipe(Effect.map((n) => `c0ffee${n}`)),
          recentCommits: (request) =>
            Effect.sync(() => {
              options.historyCalls?.push(request)
              return (options.commits ?? []).slice(0, request.count)
            })
        }
      })
    )
}
