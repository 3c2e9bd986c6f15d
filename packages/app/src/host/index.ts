// What the application is started with, and this process as a lock records it: light enough for
// the `--status` entry, which loads nothing else of the application.
export * from "./Invocation.js"
export { lockIdentity } from "./Process.js"
