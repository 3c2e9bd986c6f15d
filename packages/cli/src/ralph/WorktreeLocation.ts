import { sep } from "node:path"

/** Where spool runs from: the directory to look for `.spool/` in, and the change whose worktree holds `cwd`, if one does. */
export interface Location {
  readonly workspaceCwd: string
  readonly worktreeChange: string | null
}

const MARK = [".spool", ".state", "worktrees"]

/**
 * Inside a change's worktree (`<main>/.spool/.state/worktrees/<change-id>/...`) spool works as in
 * the main work tree, whose `.spool/.state/` holds the loop's state, and on that change by default.
 */
export const locate = (cwd: string): Location => {
  const parts = cwd.split(sep)
  for (let i = 1; i < parts.length - MARK.length; i++) {
    if (MARK.every((name, k) => parts[i + k] === name) && parts[i + MARK.length] !== "") {
      return { workspaceCwd: parts.slice(0, i).join(sep) || sep, worktreeChange: parts[i + MARK.length]! }
    }
  }
  return { workspaceCwd: cwd, worktreeChange: null }
}
