import { describe, it } from "@effect/vitest"
import { pi } from "./agents/pi.js"
import { agentScenarios, sandboxedWrite } from "./agents/scenarios.js"

// The real pi binary, driven by `spool ralph --harness pi`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness pi, with the real pi binary", () => {
  agentScenarios(pi)

  // The fake server's address is in pi's models.json, no base URL variable: --allow-host lets pi reach it.
  it("completes a change under --sandbox, with --allow-host the fake server's address", () =>
    sandboxedWrite(pi, (server) => ["--allow-host", new URL(server.baseURL).host], (server) => [
      "api.anthropic.com",
      "api.openai.com",
      "generativelanguage.googleapis.com",
      new URL(server.baseURL).host
    ]))
})
