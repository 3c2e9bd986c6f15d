export * as CodexEvent from "./CodexEvent.js"
export * as CodexHarness from "./CodexHarness.js"
export * as CodexLimit from "./CodexLimit.js"
export * as CodexOutput from "./CodexOutput.js"
