import { expect } from "@effect/vitest"
import { type FakeModelServer, startFakeModelServer, type Turn, Turn as T } from "@spool/testkit/fakeModelServer"
import { PI_BIN, piEnv, TEST_MODEL, TEST_MODEL_ID } from "@spool/testkit/piEnv"
import { processesIn } from "@spool/testkit/processes"
import { join } from "node:path"
import { type Agent, chatRequests, PROMISE } from "./agent.js"

/** pi (`@mariozechner/pi-coding-agent`) against the fake OpenAI-compatible server. */
export const pi: Agent<ReadonlyArray<Turn>, FakeModelServer> = {
  name: "pi",
  flags: ["--harness", "pi", "--model", TEST_MODEL],
  model: TEST_MODEL_ID,
  bin: { variable: "SPOOL_PI_BIN", path: PI_BIN, install: "npm install -g @mariozechner/pi-coding-agent" },
  start: startFakeModelServer,
  env: (server, home) => piEnv({ baseURL: server.baseURL, root: home }),
  requests: chatRequests,
  write: {
    script: (root) => [T.call("write", { path: join(root, "greeting.txt"), content: "hello from pi\n" }, "Writing greeting.txt."), T.text("The file is written.\n\n", PROMISE)],
    flags: [],
    shown: "→ write greeting.txt",
    check: ({ status, statusText }) => {
      // Two requests of 100 prompt tokens (30 cached) and 20 completion tokens, priced by models.json.
      expect(status.history[0].usage).toMatchObject({ inputTokens: 140, outputTokens: 40, reasoningTokens: 0, cacheReadTokens: 60, cacheWriteTokens: 0 })
      expect(status.history[0].usage.cost).toBeCloseTo(2 * 0.000519, 9)
      expect(status.usage.tokens).toBe(180)
      expect(status.usage.cost).toBeCloseTo(2 * 0.000519, 9)
      expect(statusText).toMatch(/usage: +180 tokens, \$0\.0010/)
    }
  },
  failure: {
    script: () => [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
    error: { carried: /^400 bad request: context too long$/ },
    shown: "✗ pi: 400 bad request: context too long",
    exit: { zero: "pi exits 0 when its run ends on a failed model request: the failure is read from its JSON events" }
  },
  promise: () => [T.text("Read it all.\n", PROMISE)],
  interrupt: {
    // The model runs a command that would outlive pi if only pi were stopped.
    script: () => [T.call("bash", { command: "sleep 300" }, "Waiting.")],
    flags: [],
    running: (root) => processesIn(root),
    ready: (running) => running.some((p) => p.cmdline.includes("sleep 300")),
    check: (running, server) => {
      expect(server.requests.length).toBe(1)
      expect(running.some((p) => p.cmdline.includes("sleep 300"))).toBe(true)
      // pi sets its process title to `pi`: that is all its command line shows.
      expect(running.some((p) => p.cmdline.trim() === "pi")).toBe(true)
    }
  },
  limit: { none: "pi retries a 429 itself before it gives up: its limit words are read in PiLimit.test.ts, not run with the real binary yet" },
  permission: { none: "pi asks no approval for any tool call: --allow-all changes nothing" }
}
