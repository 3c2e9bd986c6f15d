import { describe, expect, it } from "@effect/vitest"
import { FAKE_PROVIDER, OPENCODE_BIN, opencodeEnv, startFakeModelServer, Turn as T } from "@spool/testkit/fakeModelServer"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { PROMISE } from "./agents/agent.js"
import { userText } from "./agents/agent.js"
import { opencode } from "./agents/opencode.js"
import { agentScenarios, ralph, sandboxedWrite, statusJson, withAgent } from "./agents/scenarios.js"
import { addChange, git, spool, withFakeServer } from "./support.js"

// The real opencode binary, driven by `spool ralph`, against a fake OpenAI-compatible server on 127.0.0.1.
describe("spool ralph --harness opencode, with the real opencode binary", () => {
  agentScenarios(opencode)

  // The fake server's address is in OPENCODE_CONFIG_CONTENT, no base URL variable: --allow-host lets opencode reach it.
  it("completes a change under --sandbox, with --allow-host the fake server's address", () =>
    sandboxedWrite(opencode, (server) => ["--allow-host", new URL(server.baseURL).host], (server) => [
      "api.anthropic.com",
      "api.openai.com",
      "opencode.ai",
      "models.dev",
      new URL(server.baseURL).host
    ]))

  it("with --verify, a claim completes only once the check passes: the first is rejected and the model is told why", () =>
    withAgent(
      opencode,
      (root) => [
        T.text("All done.\n\n", PROMISE),
        T.write(join(root, "greeting.txt"), "hello\n"),
        T.text("greeting.txt is written now.\n\n", PROMISE)
      ],
      async (server, root, env) => {
        const check = "test -s greeting.txt || { echo \"FAIL: $(echo greeting).txt is missing\"; exit 1; }"
        const result = await spool(ralph(opencode, "Write greeting.txt.", "--allow-all", "--max-iterations", "3", "--verify", check), { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toMatch(/--- iteration 1: .* \| promise rejected: verify failed: test -s greeting\.txt .* \(exit 1, /)
        expect(result.stdout).toMatch(/--- iteration 2: .* \| promise found, verified: test -s greeting\.txt .* \| .* -> complete/)
        expect(userText(server, server.requests.length - 2)).toContain("FAIL: greeting.txt is missing")
        const { history } = await statusJson(root)
        expect(history.map((r: { outcome: string; verify: ReadonlyArray<{ passed: boolean }> }) => [r.outcome, r.verify.map((c) => c.passed)])).toEqual([
          ["failed", [false]],
          ["complete", [true]]
        ])
      }
    ))

  it("completes two changes side by side in one sweep with --merge, both merged into main", () =>
    withFakeServer(
      // The two loops ask in any order: each request is answered for the change its prompt names.
      (root) =>
        startFakeModelServer((request) => {
          if (request.messages.some((m) => m.role === "tool")) return T.text("The file is written.\n\n", PROMISE)
          const prompt = request.messages.filter((m) => m.role === "user").map((m) => m.text).join("\n")
          const id = /\b001-0[12]_[\w-]+/.exec(prompt)![0]
          return T.write(join(root, ".spool", ".state", "worktrees", id, `${id}.txt`), `${id} is done\n`)
        }),
      (server, home) => opencodeEnv({ baseURL: server.baseURL, root: home, models: ["default-model"] }),
      async (_server, root, env) => {
        addChange(root, "001-02_farewell")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "second change")
        const result = await spool(
          ["ralph", "--continue-ready", "--max-parallel", "2", "--merge", "--harness", "opencode", "--model", `${FAKE_PROVIDER}/default-model`, "--allow-all", "--no-interactive", "Write the file."],
          { cwd: root, env: { ...env, SPOOL_OPENCODE_BIN: OPENCODE_BIN } }
        )
        expect(result.code, result.stderr).toBe(0)
        for (const id of ["001-01_greeting-cli", "001-02_farewell"]) {
          // Two opencodes starting at once in one home may race on creating its database: a first
          // iteration that fails so is run again, and the change still completes and is merged.
          expect(result.stdout).toMatch(new RegExp(`^${id} +complete +\\d+ .* merged into main \\([0-9a-f]{8}\\)$`, "m"))
          expect(readFileSync(join(root, `${id}.txt`), "utf8")).toBe(`${id} is done\n`)
        }
        expect(result.stdout).toMatch(/^total: \d+ iterations, .*2 merged into main$/m)
        expect(git(root, "status", "--porcelain")).toBe("")
        expect(git(root, "worktree", "list", "--porcelain").split("\n").filter((line) => line.startsWith("worktree "))).toHaveLength(1)
      }
    ))
})
