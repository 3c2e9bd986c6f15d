export * as GitSummaryLive from "./GitSummaryLive.js"
