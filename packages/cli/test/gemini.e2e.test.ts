import { describe, it } from "@effect/vitest"
import { gemini } from "./agents/gemini.js"
import { agentScenarios, sandboxedWrite } from "./agents/scenarios.js"

// The real gemini binary, driven by `spool ralph --harness gemini`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness gemini, with the real gemini binary", () => {
  agentScenarios(gemini)

  // GOOGLE_GEMINI_BASE_URL is gemini's own variable: its host is the one allowed, with no --allow-host.
  it("completes a change under --sandbox, its base URL's host the one it may reach", () =>
    sandboxedWrite(gemini, () => [], (server) => [new URL(server.baseURL).host]))
})
