export * as ClaudeEvent from "./ClaudeEvent.js"
export * as ClaudeHarness from "./ClaudeHarness.js"
export * as ClaudeLimit from "./ClaudeLimit.js"
export * as ClaudeOutput from "./ClaudeOutput.js"
