import { describe } from "@effect/vitest"
import { codex } from "./agents/codex.js"
import { agentScenarios } from "./agents/scenarios.js"

// The real codex binary, driven by `spool ralph --harness codex`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness codex, with the real codex binary", () => {
  agentScenarios(codex)
})
