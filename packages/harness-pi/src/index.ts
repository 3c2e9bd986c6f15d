export * as PiEvent from "./PiEvent.js"
export * as PiHarness from "./PiHarness.js"
export * as PiLimit from "./PiLimit.js"
export * as PiOutput from "./PiOutput.js"
