import { ContextStore, ErrorJournal, HistoryStore, type LayoutName, LoopLock, Workspace } from "@spool/core"
import { GitWorktree } from "@spool/git"
import { Effect, Layer } from "effect"
import { Invocation } from "./host/Invocation.js"
import { lockIdentity } from "./host/Process.js"
import { Lists } from "./list/Lists.js"
import { Runs } from "./run/Runs.js"
import { Approvals } from "./sweep/Approvals.js"
import { Sweeps } from "./sweep/Sweeps.js"

/** The repository to work in: a directory in it, and which tree of changes to read where it holds several (null: the one it has). */
export interface WorkspaceAt {
  readonly cwd: string
  readonly layout: LayoutName | null
}

/** The workspace at `at` and its stores: contexts, loop states and records, the error journal, locks held by this process, worktrees. */
export const workspaceLayer = (at: WorkspaceAt) =>
  Layer.unwrapEffect(Effect.map(Invocation, (invocation) =>
    Layer.mergeAll(ContextStore.layer, HistoryStore.layer, ErrorJournal.layer, LoopLock.layer(lockIdentity(invocation.pid)), GitWorktree.layer).pipe(
      Layer.provideMerge(Workspace.layer(at.cwd, at.layout))
    )))

/** Runs, sweeps, lists and people's words on merges, over whatever workspace and stores are given. */
export const services = Layer.mergeAll(Runs.layer, Sweeps.layer, Lists.layer, Approvals.layer)

/**
 * The application on the workspace at `at`: `Runs`, `Sweeps` and `Lists`, with the workspace and
 * its stores. It needs what it was started with (`Invocation`), where it says what it does
 * (`Reports`), and the platform (files, paths, processes).
 */
export const layer = (at: WorkspaceAt) => services.pipe(Layer.provideMerge(workspaceLayer(at)))
