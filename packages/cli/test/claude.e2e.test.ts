import { describe } from "@effect/vitest"
import { claude } from "./agents/claude.js"
import { agentScenarios } from "./agents/scenarios.js"

// The real claude binary, driven by `spool ralph --harness claude`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness claude, with the real claude binary", () => {
  agentScenarios(claude)
})
