import { expect } from "@effect/vitest"
import { COPILOT_BIN, copilotEnv, TEST_MODEL } from "@spool/testkit/copilotEnv"
import { type FakeModelServer, startFakeModelServer, type Turn, Turn as T } from "@spool/testkit/fakeModelServer"
import { processesIn } from "@spool/testkit/processes"
import { join } from "node:path"
import { type Agent, chatRequests, PROMISE } from "./agent.js"

/** Copilot CLI (`@github/copilot`) against the fake OpenAI-compatible server, in its own-model mode, offline. */
export const copilot: Agent<ReadonlyArray<Turn>, FakeModelServer> = {
  name: "copilot",
  flags: ["--harness", "copilot", "--model", TEST_MODEL],
  model: TEST_MODEL,
  bin: { variable: "SPOOL_COPILOT_BIN", path: COPILOT_BIN, install: "npm install -g @github/copilot" },
  start: startFakeModelServer,
  env: (server, home) => copilotEnv({ baseURL: server.baseURL, root: home }),
  requests: chatRequests,
  write: {
    script: (root) => [
      T.call("create", { path: join(root, "greeting.txt"), file_text: "hello from copilot\n" }, "Writing greeting.txt."),
      T.text("The file is written.\n\n", PROMISE)
    ],
    // Without it copilot denies the write (the permission scenario).
    flags: ["--allow-all"],
    shown: "→ create greeting.txt",
    check: ({ status, statusText }) => {
      // Two requests of 100 prompt tokens (30 cached) and 20 completion tokens (5 reasoning), from
      // copilot's usage file; it reports no cost in money.
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
    error: { carried: /^400 bad request: context too long$/ },
    shown: "✗ copilot: 400 bad request: context too long",
    exit: "non-zero"
  },
  promise: () => [T.text("Read it all.\n", PROMISE)],
  interrupt: {
    // The model runs a command that would outlive copilot if only copilot were stopped.
    script: () => [T.call("bash", { command: "sleep 300", description: "Waits.", initial_wait: 600 }, "Waiting.")],
    flags: ["--allow-all"],
    running: (root) => processesIn(root),
    ready: (running) => running.some((p) => p.cmdline.includes("sleep 300")),
    check: (running, server) => {
      expect(server.requests.length).toBe(1)
      expect(running.some((p) => p.cmdline.includes("sleep 300"))).toBe(true)
      // npm's loader and the native copilot it starts: both must go.
      expect(running.some((p) => p.cmdline.includes("@github/copilot/npm-loader.js"))).toBe(true)
      expect(running.some((p) => p.cmdline.includes("copilot-linux-x64/copilot"))).toBe(true)
    }
  },
  limit: {
    // A 429 whose retry-after (two minutes) copilot would wait out by itself, then retry: spool reads
    // it at the first failure and stops copilot; the retry-after, which copilot prints nowhere, is read
    // from its log of the run.
    script: () => Array.from({ length: 6 }, () => T.limit("Rate limit reached for requests", { "retry-after": "120" })),
    resetsInMs: 120_000,
    readAs: "retry-after",
    error: "429 Rate limit reached for requests"
  },
  permission: {
    // copilot denies the write and goes on to its next request: the second run's writes are allowed.
    script: (root) => [
      T.call("create", { path: join(root, "denied.txt"), file_text: "nope\n" }, "Writing denied.txt."),
      T.text("I could not write it."),
      T.call("create", { path: join(root, "allowed.txt"), file_text: "yes\n" }, "Writing allowed.txt."),
      T.text("Written.\n", PROMISE)
    ],
    check: (result, server) => {
      expect(result.stdout).toContain("✗ create denied.txt: Permission denied because no interactive user response was available.")
      expect(result.stderr).toMatch(/warning: copilot denied a tool call that needs approval \(create denied\.txt\).*--allow-all/)
      expect(server.requests.length).toBe(2)
    },
    allowed: { file: "allowed.txt", content: "yes\n" }
  }
}
