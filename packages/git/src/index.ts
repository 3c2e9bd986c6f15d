export * as GitSummaryLive from "./GitSummaryLive.js"
export * as GitWorktree from "./GitWorktree.js"
export * as GitRemoteHome from "./GitRemoteHome.js"
export * as GitRemoteSnapshot from "./GitRemoteSnapshot.js"
