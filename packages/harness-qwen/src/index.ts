export * as QwenEvent from "./QwenEvent.js"
export * as QwenHarness from "./QwenHarness.js"
export * as QwenLimit from "./QwenLimit.js"
export * as QwenOutput from "./QwenOutput.js"
