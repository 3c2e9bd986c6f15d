import { describe } from "@effect/vitest"
import { pi } from "./agents/pi.js"
import { agentScenarios } from "./agents/scenarios.js"

// The real pi binary, driven by `spool ralph --harness pi`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness pi, with the real pi binary", () => {
  agentScenarios(pi)
})
