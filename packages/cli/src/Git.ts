import { GitSummaryLive } from "@spool/git"

/** Git for the repository holding `.spool/`; outside a git work tree, a GitSummary that records nothing. */
export const gitLayer = (root: string) => GitSummaryLive.layer(root)
