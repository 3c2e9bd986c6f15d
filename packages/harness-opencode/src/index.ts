export * as OpencodeEvent from "./OpencodeEvent.js"
export * as OpencodeHarness from "./OpencodeHarness.js"
export * as OpencodeOutput from "./OpencodeOutput.js"
