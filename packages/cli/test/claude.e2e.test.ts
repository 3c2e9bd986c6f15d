import { describe, it } from "@effect/vitest"
import { claude } from "./agents/claude.js"
import { agentScenarios, sandboxedWrite } from "./agents/scenarios.js"

// The real claude binary, driven by `spool ralph --harness claude`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness claude, with the real claude binary", () => {
  agentScenarios(claude)

  // ANTHROPIC_BASE_URL is claude's own variable: its host is the one allowed, with no --allow-host.
  it("completes a change under --sandbox, its base URL's host the one it may reach", () =>
    sandboxedWrite(claude, () => [], (server) => [new URL(server.baseURL).host]))
})
