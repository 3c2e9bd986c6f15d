import { type FileDiff, GitError, type GitSnapshot, ReviewGit } from "@spool/core"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as GitCommand from "./GitCommand.js"

const NUMSTAT_LINE = /^(-|\d+)\t(-|\d+)\t(.*)$/

/** The diff's patches, one per file, in the order git prints them (the order of `--numstat`). */
const splitPatches = (patch: string): Array<string> => {
  const parts = patch.split(/^(?=diff --git )/m)
  return parts.filter((part) => part.startsWith("diff --git "))
}

/** Each file of a diff: its counts from `--numstat -z` (no renames: a path per line) and its patch. */
export const fileDiffs = (numstat: string, patch: string): Array<FileDiff> => {
  const patches = splitPatches(patch)
  return numstat.split("\0").flatMap((entry, i): Array<FileDiff> => {
    const match = NUMSTAT_LINE.exec(entry.replace(/^\n/, ""))
    if (match === null) return []
    const [, added, deleted, path] = match
    const binary = added === "-"
    return [{ path: path!, added: binary ? null : Number(added), deleted: binary ? null : Number(deleted), patch: patches[i] ?? "" }]
  })
}

const fileSystem = <A>(operation: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) => new GitError({ operation, detail: cause instanceof Error ? cause.message : String(cause) })
  })

const DIFF = ["diff", "--no-color", "--no-ext-diff", "--no-renames", "--no-textconv"] as const

/**
 * `ReviewGit` for the repository around `cwd`: the diff between two snapshots (tree objects), and a
 * throwaway work tree of a snapshot, made from a commit of its tree that no branch or ref names
 * (git's garbage collection takes it in time), removed with whatever was written in it. The work
 * tree is made at `place` when given (where a sandbox's walls let the reviewer write), else in a new
 * temporary directory each time.
 */
export const make = (cwd: string, place?: string) =>
  Effect.map(GitCommand.make(cwd), (git): ReviewGit["Type"] => ({
    diff: (from: GitSnapshot, to: GitSnapshot) =>
      Effect.zipWith(
        git.run("diff", [...DIFF, "--numstat", "-z", from.tree, to.tree]),
        git.run("diff", [...DIFF, from.tree, to.tree]),
        fileDiffs
      ),
    checkout: (at: GitSnapshot) =>
      Effect.gen(function*() {
        const commit = (yield* git.runQuiet("commit-tree", [
          "-c", "user.name=spool", "-c", "user.email=spool@localhost", "commit-tree", at.tree, "-m", "the work under review"
        ])).trim()
        const tree = place ?? Path.join(
          yield* Effect.acquireRelease(
            fileSystem("worktree", () => Fs.mkdtemp(Path.join(Os.tmpdir(), "spool-review-"))),
            (dir) => fileSystem("worktree", () => Fs.rm(dir, { recursive: true, force: true })).pipe(Effect.ignore)
          ),
          "tree"
        )
        yield* Effect.acquireRelease(
          git.runQuiet("worktree", ["worktree", "add", "--quiet", "--detach", tree, commit]),
          () =>
            git.runQuiet("worktree", ["worktree", "remove", "--force", tree]).pipe(
              Effect.zipRight(git.runQuiet("worktree", ["worktree", "prune"])),
              Effect.zipRight(fileSystem("worktree", () => Fs.rm(tree, { recursive: true, force: true }))),
              Effect.ignore
            )
        )
        return tree
      })
  }))

/** The layer of `ReviewGit` for the repository around `cwd`; where git cannot run, one whose every call fails, saying why. */
export const layer = (cwd: string, place?: string): Layer.Layer<ReviewGit> =>
  Layer.effect(
    ReviewGit,
    Effect.catchAll(make(cwd, place), (error) => Effect.succeed<ReviewGit["Type"]>({ diff: () => Effect.fail(error), checkout: () => Effect.fail(error) }))
  )
