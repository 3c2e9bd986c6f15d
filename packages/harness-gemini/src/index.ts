export * as GeminiEvent from "./GeminiEvent.js"
export * as GeminiHarness from "./GeminiHarness.js"
export * as GeminiLimit from "./GeminiLimit.js"
export * as GeminiOutput from "./GeminiOutput.js"
