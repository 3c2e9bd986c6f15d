import { expect } from "@effect/vitest"
import { byTurn, CLAUDE_BIN, claudeEnv, type FakeAnthropicServer, Reply, type Script, startFakeAnthropicServer } from "@spool/testkit/fakeAnthropicServer"
import { processesIn } from "@spool/testkit/processes"
import { type Agent, PROMISE } from "./agent.js"

/** claude (`@anthropic-ai/claude-code`) against a fake Anthropic Messages API. */
export const claude: Agent<Script, FakeAnthropicServer> = {
  name: "claude",
  flags: ["--harness", "claude", "--model", "claude-test-model"],
  model: "claude-test-model",
  bin: { variable: "SPOOL_CLAUDE_BIN", path: CLAUDE_BIN, install: "npm install -g @anthropic-ai/claude-code" },
  start: startFakeAnthropicServer,
  // claudeEnv sets IS_SANDBOX=1: these tests run as root in CI, and --allow-all needs it there.
  env: (server, home) => claudeEnv({ baseURL: server.baseURL, root: home }),
  requests: (server) =>
    server.requests.map((r) => ({ model: r.model, prompt: r.messages.filter((m) => m.role === "user").flatMap((m) => m.texts).join("\n") })),
  write: {
    script: () => byTurn(Reply.write("greeting.txt", "hello from claude\n"), Reply.text("The file is written.\n\n", PROMISE)),
    flags: ["--allow-all"],
    shown: "→ Write greeting.txt",
    check: ({ result, server, status, statusText }) => {
      expect(result.stdout).toMatch(/--- iteration 1: exit 0 \| .* \| promise found \| 1 file changed \|/)
      expect(server.requests.map((r) => r.path)).toEqual(["/v1/messages?beta=true", "/v1/messages?beta=true"])
      expect(status.history[0].usage).toMatchObject({ inputTokens: 200, outputTokens: 40, cacheReadTokens: 60, cacheWriteTokens: 20 })
      expect(status.history[0].usage.cost).toBeGreaterThan(0)
      expect(status.usage.tokens).toBe(240)
      expect(status.usage.cost).toBeGreaterThan(0)
      expect(statusText).toMatch(/usage: +240 tokens, \$\d+\.\d{4}/)
    }
  },
  failure: {
    // claude repeats a rejected request a few times: every request of iteration 1 gets the error.
    script: () => ({ prompt }) =>
      prompt.includes("Ralph loop: iteration 1 ") ? Reply.error("bad request: context too long") : Reply.text("Recovered.\n", PROMISE),
    error: { carried: /^API Error: 400 .*bad request: context too long/ },
    shown: /--- iteration 1: exit 1 \| .*error: API Error: 400 .*bad request: context too long/,
    exit: "non-zero"
  },
  promise: () => byTurn(Reply.text("Read it all.\n", PROMISE)),
  interrupt: {
    // The model runs a command that would outlive claude if only claude were stopped (claude refuses a bare `sleep`).
    script: () => byTurn(Reply.call("Bash", { command: "tail -f /dev/null", description: "Waits." }, "Waiting.")),
    flags: ["--allow-all"],
    running: (root) => processesIn(root),
    ready: (running) => running.some((p) => p.cmdline.includes("tail -f /dev/null")),
    check: (running) => {
      expect(running.some((p) => p.cmdline.includes("tail -f /dev/null"))).toBe(true)
      expect(running.some((p) => p.cmdline.includes("@anthropic-ai/claude-code/bin/claude"))).toBe(true)
    }
  },
  limit: { none: "claude's limits run with its real binary in fallback.e2e.test.ts (a 5-hour limit with its reset: waited out, fallen back from)" },
  permission: {
    script: () => byTurn(Reply.write("denied.txt", "nope\n"), Reply.text("I could not write it.")),
    check: (result) => {
      expect(result.stdout).toContain("✗ Write denied.txt: permission denied")
      expect(result.stderr).toMatch(/warning: claude denied a tool call that needs permission \(Write denied\.txt\).*--allow-all/)
    }
  }
}
