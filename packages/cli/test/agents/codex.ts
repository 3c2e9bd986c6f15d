import { expect } from "@effect/vitest"
import {
  CODEX_BIN,
  codexEnv,
  type FakeResponsesServer,
  startFakeResponsesServer,
  TEST_MODEL,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeResponsesServer"
import { processesMentioning } from "@spool/testkit/processes"
import { type Agent, PROMISE } from "./agent.js"

/** codex (`@openai/codex`) against a fake Responses API. */
export const codex: Agent<ReadonlyArray<Turn>, FakeResponsesServer> = {
  name: "codex",
  flags: ["--harness", "codex", "--model", TEST_MODEL],
  model: TEST_MODEL,
  bin: { variable: "SPOOL_CODEX_BIN", path: CODEX_BIN, install: "npm install -g @openai/codex" },
  start: startFakeResponsesServer,
  env: (server, home) => codexEnv({ baseURL: server.baseURL, root: home }),
  requests: (server) => server.requests.map((r) => ({ model: r.model, prompt: r.userTexts.join("\n") })),
  write: {
    // codex writes through a shell command; without --allow-all it runs in its workspace-write sandbox.
    script: () => [T.shell("printf 'hello from codex\\n' > greeting.txt", "Writing greeting.txt."), T.text("The file is written.\n\n", PROMISE)],
    flags: [],
    shown: "→ $ printf 'hello from codex\\n' > greeting.txt (exit 0)",
    check: ({ status, statusText }) => {
      // Two requests of 100 input (30 cached) and 20 output (5 reasoning) tokens each; codex reports no cost.
      expect(status.history[0].usage).toEqual({
        inputTokens: 140,
        outputTokens: 30,
        reasoningTokens: 10,
        cacheReadTokens: 60,
        cacheWriteTokens: 0,
        cost: null
      })
      expect(status.usage).toEqual({ tokens: 180, cost: null })
      expect(statusText).toContain("usage:     180 tokens, cost unknown")
    }
  },
  failure: {
    script: () => [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
    error: { carried: /^bad request: context too long$/ },
    shown: "error: bad request: context too long",
    exit: "non-zero"
  },
  promise: () => [T.text("Read it all.\n", PROMISE)],
  interrupt: {
    script: () => [T.stall()],
    flags: [],
    // The npm package's `codex` is a Node wrapper of a native binary; both carry `-C <root>`.
    running: (root) => processesMentioning(root),
    ready: (running) => running.some((p) => p.cmdline.includes("vendor/")),
    check: (running) => {
      expect(running.some((p) => p.cmdline.includes("vendor/"))).toBe(true)
      expect(running.length).toBeGreaterThanOrEqual(2)
    }
  },
  limit: { none: "codex's limits run with its real binary in fallback.e2e.test.ts (usage_limit_reached with resets_at)" },
  permission: { none: "without --allow-all codex runs in its workspace-write sandbox, which lets it write the work tree: nothing is denied" }
}
