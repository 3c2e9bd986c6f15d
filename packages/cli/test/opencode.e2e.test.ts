import { describe, expect, it } from "@effect/vitest"
import { Turn as T } from "@spool/testkit/fakeModelServer"
import { join } from "node:path"
import { PROMISE } from "./agents/agent.js"
import { opencode, userText } from "./agents/opencode.js"
import { agentScenarios, ralph, statusJson, withAgent } from "./agents/scenarios.js"
import { spool } from "./support.js"

// The real opencode binary, driven by `spool ralph`, against a fake OpenAI-compatible server on 127.0.0.1.
describe("spool ralph --harness opencode, with the real opencode binary", () => {
  agentScenarios(opencode)

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
})
