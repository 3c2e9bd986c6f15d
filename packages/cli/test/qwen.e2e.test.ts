import { describe, it } from "@effect/vitest"
import { qwen } from "./agents/qwen.js"
import { agentScenarios, sandboxedWrite } from "./agents/scenarios.js"

// The real qwen binary, driven by `spool ralph --harness qwen`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness qwen, with the real qwen binary", () => {
  agentScenarios(qwen)

  // OPENAI_BASE_URL is one of qwen's own variables: its host is the one allowed, with no --allow-host.
  it("completes a change under --sandbox, its base URL's host the one it may reach", () =>
    sandboxedWrite(qwen, () => [], (server) => [new URL(server.baseURL).host]))
})
