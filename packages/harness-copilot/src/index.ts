export * as CopilotEvent from "./CopilotEvent.js"
export * as CopilotHarness from "./CopilotHarness.js"
export * as CopilotLimit from "./CopilotLimit.js"
export * as CopilotOutput from "./CopilotOutput.js"
