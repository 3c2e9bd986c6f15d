import { expect } from "@effect/vitest"
import { type FakeModelServer, startFakeModelServer, Turn as T } from "@spool/testkit/fakeModelServer"
import { processesIn } from "@spool/testkit/processes"
import { QWEN_BIN, qwenEnv, TEST_MODEL } from "@spool/testkit/qwenEnv"
import { join } from "node:path"
import { type Agent, chatRequests, PROMISE } from "./agent.js"

/** The fake server's script: turns in order, or one turn for every request. */
type Script = Parameters<typeof startFakeModelServer>[0]

/** qwen's own processes: its launcher and the node processes it starts of itself. */
const isQwen = (cmdline: string) => cmdline.includes("@qwen-code/qwen-code/cli")

/** Qwen Code (`@qwen-code/qwen-code`) against the fake OpenAI-compatible server. */
export const qwen: Agent<Script, FakeModelServer> = {
  name: "qwen",
  flags: ["--harness", "qwen", "--model", TEST_MODEL],
  model: TEST_MODEL,
  bin: { variable: "SPOOL_QWEN_BIN", path: QWEN_BIN, install: "npm install -g @qwen-code/qwen-code" },
  start: startFakeModelServer,
  env: (server, home) => qwenEnv({ baseURL: server.baseURL, root: home }),
  requests: chatRequests,
  write: {
    script: (root) => [
      T.call("write_file", { file_path: join(root, "greeting.txt"), content: "hello from qwen\n" }, "Writing greeting.txt."),
      T.text("The file is written.\n\n", PROMISE)
    ],
    // Without it qwen offers no write tool (the permission scenario).
    flags: ["--allow-all"],
    shown: "→ write_file greeting.txt",
    check: ({ status, statusText }) => {
      // Two requests of 100 prompt tokens (30 cached) and 20 completion tokens; qwen reports neither thinking nor cost.
      expect(status.history[0].usage).toEqual({ inputTokens: 140, outputTokens: 40, reasoningTokens: 0, cacheReadTokens: 60, cacheWriteTokens: 0, cost: null })
      expect(status.usage).toEqual({ tokens: 180, cost: null })
      expect(statusText).toContain("usage:     180 tokens, cost unknown")
    }
  },
  failure: {
    script: () => [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
    error: { carried: /^400 bad request: context too long$/ },
    shown: "✗ [API Error: 400 bad request: context too long]",
    exit: "non-zero"
  },
  promise: () => [T.text("Read it all.\n", PROMISE)],
  interrupt: {
    // The model runs a command that would outlive qwen if only qwen were stopped; qwen refuses a
    // bare `sleep` unless a comment says it is meant.
    script: () => [T.call("run_shell_command", { command: "sleep 300 # intentional-sleep: wait until stopped" }, "Waiting.")],
    flags: ["--allow-all"],
    running: (root) => processesIn(root),
    ready: (running) => running.some((p) => p.cmdline.includes("sleep 300")),
    check: (running, server) => {
      expect(server.requests.length).toBe(1)
      expect(running.some((p) => p.cmdline.includes("sleep 300"))).toBe(true)
      // qwen's launcher starts two more node processes of itself: all must go.
      expect(running.filter((p) => isQwen(p.cmdline)).length).toBeGreaterThanOrEqual(3)
    }
  },
  limit: {
    // Every request (the API client's own retries, then qwen's) is answered with the limit.
    script: () => () => T.limit("Rate limit reached for requests", { "retry-after": "3600" }),
    resetsInMs: 3_600_000,
    // qwen names the rest of its wait (`retry in 3570s`, 30 s into it), not a reset time.
    readAs: "retry-after",
    error: /^qwen is waiting for API capacity: .*HTTP 429.*; next try in 3570s$/
  },
  permission: {
    // qwen offers no write tool without --allow-all; the model's call of it is declined. The
    // second run, with --allow-all, writes the next file.
    script: (root) => [
      T.call("write_file", { file_path: join(root, "denied.txt"), content: "nope\n" }, "Writing."),
      T.text("I could not write it."),
      T.call("write_file", { file_path: join(root, "allowed.txt"), content: "yes\n" }, "Writing."),
      T.text("Written.\n", PROMISE)
    ],
    check: (result, server) => {
      expect(result.stdout).toContain("✗ write_file denied.txt: Qwen Code requires permission to use \"write_file\"")
      expect(result.stderr).toMatch(/warning: qwen denied a tool call that needs permission \(write_file denied\.txt\).*--allow-all/)
      expect(server.requests.length).toBe(2)
    },
    allowed: { file: "allowed.txt", content: "yes\n" }
  }
}
