import { statePaths, Workspace } from "@spool/core"
import { GitSummaryLive } from "@spool/git"
import { Effect, Layer } from "effect"

/**
 * Git for the work tree at `root` (the main one or a change's worktree), leaving out the state the
 * workspace's tree keeps; outside a git work tree, a GitSummary that records nothing.
 */
export const gitLayer = (root: string) =>
  Layer.unwrapEffect(Effect.map(Workspace, (workspace) => GitSummaryLive.layer(root, statePaths(workspace.tree))))
