import { type Change, type LockIdentity, LoopLock, LoopReporter, relativeDirOf, Workspace, type Worktree, Worktrees } from "@spool/core"
import { Effect } from "effect"
import { realpathSync } from "node:fs"
import { join, relative } from "node:path"
import { RequestError } from "../RequestError.js"

/** Where a loop works: the directory the agent runs in, the change's documents there, and the worktree, if any. */
export interface WorkPlace {
  readonly cwd: string
  readonly change: Change
  readonly worktree: Worktree | null
}

const real = (path: string) => {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

/** The change's documents as the worktree has them: the agent ticks tasks there. */
const inWorktree = (change: Change, mainRoot: string, worktreeRoot: string): Change => {
  const move = (path: string) => join(worktreeRoot, relative(mainRoot, path))
  return {
    ...change,
    dir: move(change.dir),
    proposalPath: move(change.proposalPath),
    tasksPath: move(change.tasksPath),
    modulePath: change.modulePath === null ? null : move(change.modulePath),
    ...(change.quoted === undefined ? {} : { quoted: change.quoted.map((doc) => ({ ...doc, path: move(doc.path) })) })
  }
}

/**
 * Every loop commits all that changed in its work tree, so two loops in one work tree would take
 * each other's edits. A loop that commits nothing may share one, with a warning. Checked before the
 * loop takes its own lock, so that a refusal writes nothing.
 */
const refuseSharedWorkTree = (change: Change, workTree: string, commits: boolean) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const others = (yield* (yield* LoopLock).liveLoops).filter((loop) =>
      loop.changeId !== change.id && real(loop.owner.workTree ?? workspace.root) === workTree
    )
    const other = others[0]
    if (other === undefined) return
    const what = `a loop on ${other.changeId} (pid ${other.owner.pid}) is running in this work tree`
    if (!commits) {
      return yield* (yield* LoopReporter).warn(
        `${what}; this loop commits nothing (--no-commit), but its summaries count that loop's edits too`
      )
    }
    return yield* new RequestError({
      message: `${what}, and each loop commits everything that changed there; ` +
        `run this one in a worktree of its own: spool ralph --change ${change.id} --worktree (or with --no-commit)`
    })
  })

/** The work tree the loop runs in: the main one, or (with `--worktree`) the change's own, made or reused. */
export const workPlace = (change: Change, options: { readonly worktree: boolean; readonly commits: boolean }) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    if (!options.worktree) {
      yield* refuseSharedWorkTree(change, real(workspace.root), options.commits)
      return { cwd: workspace.root, change, worktree: null } satisfies WorkPlace
    }
    const worktree = yield* (yield* Worktrees).open({
      root: workspace.root,
      changeId: change.id,
      requires: [change.proposalPath, ...(change.modulePath === null ? [] : [change.modulePath])].map((file) =>
        relative(workspace.root, file)
      ),
      changeDir: relativeDirOf(change),
      // The ignore file of `.spool/.state/` must exist before the worktree does, or git status shows it.
      prepare: Effect.zip(workspace.ensureStateDir(change.id), workspace.ensureWorkDir)
    })
    yield* (yield* LoopReporter).line(
      `${worktree.created ? "made" : "reusing"} the worktree ${worktree.path} on branch ${worktree.branch}`
    )
    return { cwd: worktree.root, change: inWorktree(change, workspace.root, worktree.root), worktree } satisfies WorkPlace
  })

/** The loop's lock records the work tree it runs in (the branch and the worktree are in the loop's request). */
export const placeLayer = (place: WorkPlace, owner: LockIdentity) => LoopLock.layer({ ...owner, workTree: real(place.cwd) })

/** What to do with the work once the loop has ended (with `--remote`, the work is on the remote's branch). */
export const afterLoop = (place: WorkPlace, completed: boolean, remote: string | null = null) =>
  place.worktree === null ? Effect.void : Effect.flatMap(LoopReporter, (reporter) => {
    const { branch, path } = place.worktree!
    if (remote !== null) {
      return reporter.line(
        completed
          ? `to bring the work in: git fetch ${remote} && git merge ${remote}/${branch}`
          : `the work so far is on branch ${branch} of ${remote}; a run with --remote ${remote} --resume goes on from there, on any clone`
      )
    }
    return reporter.line(
      completed
        ? `to bring the work in: git merge ${branch}   (worktree: ${path})`
        : `the work so far is on branch ${branch} (worktree: ${path}); the next run goes on there`
    )
  })

/** `--worktree --remove`: the change's worktree goes, unless a loop runs in it or it holds uncommitted work; the branch stays. The answer says so. */
export const removeWorktree = (change: Change) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const running = (yield* (yield* LoopLock).liveLoops).find((loop) => loop.changeId === change.id)
    if (running !== undefined) {
      return yield* new RequestError({
        message: `a loop is running on ${change.id} (pid ${running.owner.pid}); stop it before removing its worktree`
      })
    }
    const removed = yield* (yield* Worktrees).remove({ root: workspace.root, changeId: change.id })
    return `removed the worktree ${removed.path}; branch ${removed.branch} stays (git branch -d ${removed.branch} once it is merged)`
  })
