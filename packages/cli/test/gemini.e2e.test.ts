import { describe } from "@effect/vitest"
import { gemini } from "./agents/gemini.js"
import { agentScenarios } from "./agents/scenarios.js"

// The real gemini binary, driven by `spool ralph --harness gemini`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness gemini, with the real gemini binary", () => {
  agentScenarios(gemini)
})
