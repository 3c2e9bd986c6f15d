import { describe, expect, it } from "@effect/vitest"
import { codex } from "./agents/codex.js"
import { agentScenarios, sandboxedWrite } from "./agents/scenarios.js"

// The real codex binary, driven by `spool ralph --harness codex`, against its fake model server on 127.0.0.1.
describe("spool ralph --harness codex, with the real codex binary", () => {
  agentScenarios(codex)

  // The fake server's address is in codex's config.toml, no variable of codex's: --allow-host lets codex reach it.
  // Its key is in the variable the test's provider names (env_key), a test's own: --pass-env hands it on.
  it("completes a change under --sandbox, with --allow-host the fake server's address, its own sandbox off", async () => {
    const { server, status } = await sandboxedWrite(
      codex,
      (server) => ["--allow-host", new URL(server.baseURL).host, "--pass-env", "SPOOL_FAKE_CODEX_KEY"],
      (server) => ["api.openai.com", "chatgpt.com", new URL(server.baseURL).host]
    )
    expect(status.sandbox.passEnv).toEqual(["SPOOL_FAKE_CODEX_KEY"])
    // `--sandbox danger-full-access`: codex tells the model it has no sandbox of its own (its bubblewrap cannot nest in spool's).
    expect(server.requests[0]!.userTexts.join("\n")).toContain('<permission_profile type="disabled">')
  })
})
