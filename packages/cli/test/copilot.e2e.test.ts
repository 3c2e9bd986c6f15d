import { describe, expect, it } from "@effect/vitest"
import { copilot } from "./agents/copilot.js"
import { agentScenarios, sandboxedWrite } from "./agents/scenarios.js"

// The real copilot binary, driven by `spool ralph --harness copilot`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness copilot, with the real copilot binary", () => {
  agentScenarios(copilot)

  // COPILOT_PROVIDER_BASE_URL is copilot's own variable: its host is the one allowed, with no --allow-host.
  // copilot writes its usage file inside the walls too (in its own directory): the tokens are recorded.
  it("completes a change under --sandbox, its base URL's host the one it may reach, its tokens recorded", async () => {
    const { status } = await sandboxedWrite(copilot, () => [], (server) => [new URL(server.baseURL).host])
    expect(status.usage).toEqual({ tokens: 180, cost: null })
  })
})
