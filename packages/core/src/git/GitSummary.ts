import { Context, Effect, Layer, Ref, Schema } from "effect"
import type { CommitInfo, GitChangeSummary } from "../domain/Domain.js"

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
  /** Every path the change touches (both sides of a rename; the summary may list fewer): what committing it stages. */
  readonly paths: ReadonlyArray<string>
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
  /** Paths whose state in `at` differs from the last commit: uncommitted work (tracked or untracked) at that moment. */
  readonly dirtyPaths: (at: GitSnapshot) => Effect.Effect<ReadonlyArray<string>, GitError>
  /**
   * Commits exactly these paths as the work tree holds them (added, edited or deleted), leaving
   * every other change, staged or not, as it was; the new commit's hash, or null when none of them
   * differs from the last commit.
   */
  readonly commit: (message: string, paths: ReadonlyArray<string>) => Effect.Effect<string | null, GitError>
  /** The last commits, newest first. */
  readonly recentCommits: (options: RecentCommitsOptions) => Effect.Effect<ReadonlyArray<CommitInfo>, GitError>
}>() {
  /** Outside a repository. */
  static readonly layerNone = Layer.succeed(GitSummary, {
    repository: false,
    snapshot: Effect.succeed(null),
    changesSince: () => Effect.succeed(null),
    dirtyPaths: () => Effect.succeed([]),
    commit: () => Effect.succeed(null),
    recentCommits: () => Effect.succeed([])
  })

  /**
   * A scripted repository for loop tests: each `changesSince` takes the next summary (its listed
   * files are its paths); commits of any path get fake hashes.
   */
  static readonly layerTest = (options: {
    readonly changes?: ReadonlyArray<GitChangeSummary>
    /** The uncommitted paths `dirtyPaths` reports. */
    readonly dirty?: ReadonlyArray<string>
    /** Receives the paths of every commit. */
    readonly commitCalls?: Array<ReadonlyArray<string>>
    /** The first this many commits fail, as a refusing hook would make them. */
    readonly failingCommits?: number
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
            Ref.modify(changes, ([next, ...rest]) => {
              const summary = next ?? empty
              return [{ summary, after: { tree: "test-tree" }, paths: summary.files }, rest] as const
            }),
          dirtyPaths: () => Effect.succeed(options.dirty ?? []),
          commit: (_message, paths) =>
            paths.length === 0 ? Effect.succeed(null) : Effect.zipRight(
              Effect.sync(() => options.commitCalls?.push(paths)),
              Ref.updateAndGet(made, (n) => n + 1).pipe(Effect.flatMap((n) =>
                n <= (options.failingCommits ?? 0)
                  ? Effect.fail(new GitError({ operation: "commit", detail: "the pre-commit hook said no" }))
                  : Effect.succeed(`c0ffee${n}`)
              ))
            ),
          recentCommits: (request) =>
            Effect.sync(() => {
              options.historyCalls?.push(request)
              return (options.commits ?? []).slice(0, request.count)
            })
        }
      })
    )
}
