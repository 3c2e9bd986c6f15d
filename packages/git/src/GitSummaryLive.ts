import { GitError, GitSummary, type GitSnapshot } from "@spool/core"
import { type Context, Effect, Layer } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as GitCommand from "./GitCommand.js"
import { LOG_FORMAT, parseLog, parseNumstat } from "./GitOutput.js"

/**
 * Everything in the work tree except the loop's own state (`statePaths`, `.spool/.state` unless
 * said). `:/` reaches the whole work tree even from a subdirectory; the exclusions are relative to
 * `cwd`, where the tree of changes lives.
 */
const workTreeSpec = (statePaths: ReadonlyArray<string>) => ["--", ":/", ...statePaths.map((path) => `:(exclude)${path}`)] as const

interface Repository {
  readonly git: GitCommand.GitCommand
  /** The same commands run from the top of the work tree, where paths as git prints them (from the root) are read. */
  readonly top: GitCommand.GitCommand
  /** The real index, as git resolves it (a linked worktree keeps its own under `.git/worktrees/`). */
  readonly indexFile: string
}

/** The repository around `cwd`, or null when `cwd` is not inside a work tree (or git cannot run). */
const findRepository = (cwd: string): Effect.Effect<Repository | null> =>
  Effect.gen(function*() {
    const git = yield* GitCommand.make(cwd)
    // `--show-toplevel` fails outside a work tree (in `.git/`, in a bare repository), so on success both lines are there.
    const output = yield* git.run("rev-parse", ["rev-parse", "--show-toplevel", "--git-path", "index"])
    const [root, indexPath] = output.split("\n") as [string, string]
    return { git, top: yield* GitCommand.make(root), indexFile: Path.resolve(cwd, indexPath) }
  }).pipe(Effect.orElseSucceed(() => null))

const fileSystem = <A>(operation: string, what: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) =>
      new GitError({ operation, detail: `${what}: ${cause instanceof Error ? cause.message : String(cause)}` })
  })

/** Where a temporary index file may be written, removed with the scope. */
const temporaryIndex = (operation: string) =>
  Effect.map(
    Effect.acquireRelease(
      fileSystem(operation, "could not create a temporary index directory", () => Fs.mkdtemp(Path.join(Os.tmpdir(), "spool-git-"))),
      (directory) => Effect.promise(() => Fs.rm(directory, { recursive: true }).catch(() => undefined))
    ),
    (directory) => Path.join(directory, "index")
  )

/** A private copy of the real index: `add -A` into it reuses git's stat cache without touching the real one. */
const scratchIndex = (operation: string, indexFile: string) =>
  Effect.gen(function*() {
    const scratch = yield* temporaryIndex(operation)
    // Stryker disable next-line BlockStatement: without the copy git starts an empty index and reads every file, the same tree more slowly
    yield* fileSystem(operation, `could not copy the index ${indexFile}`, async () => {
      const stat = await Fs.stat(indexFile).catch((cause: NodeJS.ErrnoException) => {
        // No index yet (a fresh `git init`): git starts the temporary one empty.
        if (cause.code === "ENOENT") return null
        throw cause
      })
      if (stat === null) return
      await Fs.copyFile(indexFile, scratch)
      // Git trusts cached stats only for files older than the index file; a fresh mtime would hide
      // an edit made in the same clock tick as the last `git add` (the "racy git" problem).
      await Fs.utimes(scratch, stat.atime, new Date(Math.floor(stat.mtimeMs) - 1))
    })
    return scratch
  })

const makeService = ({ git, indexFile, top }: Repository, statePaths: ReadonlyArray<string>): Context.Tag.Service<GitSummary> => {
  const WORK_TREE = workTreeSpec(statePaths)
  /** The commit HEAD names, or null on an unborn branch; a failure is reported as `operation`'s. */
  const head = (operation: string) =>
    git.runOrNull(operation, ["rev-parse", "--verify", "-q", "HEAD"]).pipe(
      Effect.map((output) => (output === null ? null : output.trim()))
    )

  const snapshot: Effect.Effect<GitSnapshot, GitError> = Effect.scoped(
    Effect.gen(function*() {
      const scratch = git.withIndexFile(yield* scratchIndex("snapshot", indexFile))
      yield* scratch.runQuiet("snapshot", ["add", "-A", ...WORK_TREE])
      const tree = (yield* scratch.run("snapshot", ["write-tree"])).trim()
      return { tree }
    })
  )

  const changesSince = (before: GitSnapshot | null) =>
    before === null
      ? Effect.succeed(null)
      : Effect.gen(function*() {
        const after = yield* snapshot
        // Stryker disable next-line StringLiteral: any text that is not a numstat record parses to the same empty summary
        if (after.tree === before.tree) return { ...parseNumstat(""), after }
        // Both sides are work-tree snapshots, so commits made in between are counted and old dirt is not.
        const output = yield* git.run("diff", [
          "diff-tree",
          "-r",
          "-M",
          "--numstat",
          "-z",
          before.tree,
          after.tree,
          // State files someone force-added are tracked, so a commit made meanwhile could carry them.
          ...WORK_TREE
        ])
        return { ...parseNumstat(output), after }
      })

  const dirtyPaths = (at: GitSnapshot) =>
    Effect.gen(function*() {
      const current = yield* head("status")
      const output = current === null
        ? yield* git.run("status", ["ls-tree", "-r", "--full-tree", "--name-only", "-z", at.tree])
        : yield* git.run("status", ["diff-tree", "-r", "--no-renames", "--name-only", "-z", current, at.tree, ...WORK_TREE])
      return output.split("\0").filter((path) => path !== "")
    })

  /**
   * The commit is built in an index of its own: the last commit with these paths as the work tree
   * holds them (added, edited, deleted; a file that became a directory or the reverse replaced), so
   * nothing else the real index holds, staged or not, goes in. Hooks run as for any commit. Paths
   * are from the root of the work tree, so these commands run there.
   */
  const commit = (message: string, paths: ReadonlyArray<string>) => {
    // Whichever of its git commands fails, the failure is the commit's.
    const operation = "commit"
    return paths.length === 0 ? Effect.succeed(null) : Effect.scoped(
      Effect.gen(function*() {
        const current = yield* head(operation)
        // A copy of the real index, set to the last commit: entries that match it keep their cached
        // stats, so the commit does not read every tracked file again.
        const next = top.withIndexFile(yield* scratchIndex(operation, indexFile))
        if (current === null) yield* next.runQuiet(operation, ["read-tree", "--empty"])
        else {
          // Stryker disable next-line StringLiteral,ArrayDeclaration: a failing `read-tree -m` falls back to `read-tree`, the same entries without cached stats (speed only)
          yield* next.runQuiet(operation, ["read-tree", "-m", current]).pipe(
            // An index in the middle of a merge cannot be merged into: start from the commit alone.
            Effect.orElse(() => next.runQuiet(operation, ["read-tree", current]))
          )
        }
        // Paths come from a snapshot that respected .gitignore, so none is added against it.
        const list = paths.map((path) => `${path}\0`).join("")
        yield* next.runQuiet(operation, ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"], { input: list })
        const unchanged = current === null
          ? (yield* next.run(operation, ["ls-files", "-z"])) === ""
          : (yield* next.runOrNull(operation, ["diff-index", "--cached", "--quiet", current, "--"])) !== null
        if (unchanged) return null
        yield* next.runQuiet(operation, ["commit", "-q", "-m", message]).pipe(Effect.mapError(explainCommitFailure))
        // The real index takes these paths as committed (a hook may have changed them), so `git status`
        // shows them clean; what else it stages stays staged.
        yield* top.runQuiet(operation, ["reset", "-q", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul"], {
          input: paths.map((path) => `:(literal)${path}\0`).join("")
        })
        return (yield* git.run(operation, ["rev-parse", "--verify", "HEAD"])).trim()
      })
    )
  }

  const recentCommits: Context.Tag.Service<GitSummary>["recentCommits"] = ({ count, includeMerges }) =>
    Effect.gen(function*() {
      const limit = Math.floor(count)
      if (limit <= 0) return []
      const output = yield* git.run("log", [
        "log",
        `--max-count=${limit}`,
        "--no-show-signature",
        LOG_FORMAT,
        ...(includeMerges ? [] : ["--no-merges"]),
        "HEAD",
        "--"
      ]).pipe(
        // An unborn branch has no history, which is not an error; asked only when `log` fails, so
        // each iteration spends one git process on its history, not two.
        Effect.catchAll((error) => Effect.flatMap(head("log"), (current) => (current === null ? Effect.succeed("") : Effect.fail(error))))
      )
      return parseLog(output)
    })

  return { repository: true, snapshot, changesSince, dirtyPaths, commit, recentCommits }
}

const explainCommitFailure = (error: GitError): GitError =>
  /Please tell me who you are|auto-detect email|empty ident name|no (name|email) was given/i.test(error.detail)
    ? new GitError({
      operation: "commit",
      detail: "no author identity is configured; set one with `git config user.name \"Your Name\"` and " +
        "`git config user.email you@example.com` in this repository, or globally with --global"
    })
    : new GitError({
      operation: "commit",
      detail: `the commit was refused, so the changes stay uncommitted (a hook may have rejected it): ${error.detail}`
    })

/**
 * `GitSummary` for the repository around `cwd`, decided once when the layer is built:
 * outside a git work tree it is `GitSummary.layerNone`.
 */
export const layer = (cwd: string, statePaths: ReadonlyArray<string> = [".spool/.state"]): Layer.Layer<GitSummary> =>
  Layer.unwrapEffect(
    Effect.map(findRepository(cwd), (repository) =>
      repository === null ? GitSummary.layerNone : Layer.succeed(GitSummary, makeService(repository, statePaths)))
  )
