import { expect } from "@effect/vitest"
import {
  type FakeGeminiServer,
  GEMINI_BIN,
  geminiEnv,
  startFakeGeminiServer,
  TEST_MODEL,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeGeminiServer"
import { processesIn } from "@spool/testkit/processes"
import { join } from "node:path"
import { type Agent, PROMISE } from "./agent.js"

/** gemini (`@google/gemini-cli`) against a fake Gemini API. */
export const gemini: Agent<ReadonlyArray<Turn>, FakeGeminiServer> = {
  name: "gemini",
  flags: ["--harness", "gemini", "--model", TEST_MODEL],
  model: TEST_MODEL,
  bin: { variable: "SPOOL_GEMINI_BIN", path: GEMINI_BIN, install: "npm install -g @google/gemini-cli" },
  start: startFakeGeminiServer,
  env: (server, home) => geminiEnv({ baseURL: server.baseURL, root: home }),
  requests: (server) => server.requests.map((r) => ({ model: r.model, prompt: r.userTexts.join("\n") })),
  write: {
    script: (root) => [T.write(join(root, "greeting.txt"), "hello from gemini\n", "Writing greeting.txt."), T.text("The file is written.\n\n", PROMISE)],
    // Without it gemini offers no write tool (the permission scenario).
    flags: ["--allow-all"],
    shown: "→ write_file greeting.txt",
    check: ({ server, status, statusText }) => {
      expect(server.requests[0]!.tools).toContain("write_file")
      // Two requests of 100 prompt (30 cached), 20 candidate and 5 thinking tokens each; gemini reports no cost.
      expect(status.history[0].usage).toEqual({
        inputTokens: 140,
        outputTokens: 40,
        reasoningTokens: 10,
        cacheReadTokens: 60,
        cacheWriteTokens: 0,
        cost: null
      })
      expect(status.usage).toEqual({ tokens: 190, cost: null })
      expect(statusText).toContain("usage:     190 tokens, cost unknown")
    }
  },
  failure: {
    script: () => [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
    error: { carried: /^bad request: context too long \(HTTP 400\)$/ },
    shown: "✗ bad request: context too long (HTTP 400)",
    exit: "non-zero"
  },
  promise: () => [T.text("Read it all.\n", PROMISE)],
  interrupt: {
    script: () => [T.stall()],
    flags: [],
    running: (root) => processesIn(root).filter((p) => p.cmdline.includes("@google/gemini-cli/")),
    // Once the model request arrives, gemini (and the node process it starts) runs in the work tree.
    ready: (_running, server) => server.requests.length > 0,
    // gemini relaunches itself as a child node process (with a larger heap): both must go.
    check: (running) => expect(running.length).toBeGreaterThanOrEqual(2)
  },
  limit: { none: "gemini retries a 429 itself before it gives up: its limit words are read in GeminiLimit.test.ts, not run with the real binary yet" },
  permission: {
    script: (root) => [T.write(join(root, "denied.txt"), "nope\n"), T.text("I could not write it.")],
    // gemini offers no write tool at all without --allow-all.
    check: (result, server) => {
      expect(server.requests[0]!.tools).not.toContain("write_file")
      expect(result.stdout).toContain("✗ write_file denied.txt: Tool \"write_file\" not found")
      expect(result.stderr).toMatch(/warning: gemini did not run a tool call that needs approval \(write_file denied\.txt\).*--allow-all/)
    }
  }
}
