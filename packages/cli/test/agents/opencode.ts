import { expect } from "@effect/vitest"
import {
  FAKE_PROVIDER,
  type FakeModelServer,
  OPENCODE_BIN,
  opencodeEnv,
  startFakeModelServer,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeModelServer"
import { processesIn } from "@spool/testkit/processes"
import { join } from "node:path"
import { type Agent, chatRequests, PROMISE } from "./agent.js"

/** opencode (`opencode-ai`) against the fake OpenAI-compatible server; its default model is not the one asked for. */
export const opencode: Agent<ReadonlyArray<Turn>, FakeModelServer> = {
  name: "opencode",
  flags: ["--harness", "opencode", "--model", `${FAKE_PROVIDER}/other-model`],
  model: "other-model",
  bin: { variable: "SPOOL_OPENCODE_BIN", path: OPENCODE_BIN, install: "npm install -g opencode-ai" },
  start: startFakeModelServer,
  env: (server, home) => opencodeEnv({ baseURL: server.baseURL, root: home, models: ["default-model", "other-model"] }),
  requests: chatRequests,
  write: {
    script: (root) => [T.write(join(root, "greeting.txt"), "hello from opencode\n"), T.text("The file is written.\n\n", PROMISE)],
    flags: ["--allow-all"],
    shown: "→ write greeting.txt",
    check: ({ server, status, statusText }) => {
      // spool asks opencode for no session title: no request of the run is one.
      expect(server.requests.some((r) => r.isTitle)).toBe(false)
      expect(status.history[0].usage.inputTokens).toBeGreaterThan(0)
      expect(status.usage.tokens).toBeGreaterThan(0)
      expect(statusText).toMatch(/usage: +\d+ tokens, \$\d+\.\d{4}/)
    }
  },
  failure: {
    script: () => [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
    error: { none: "opencode's harness shows the API error as it comes (an `error` event) but gives the record none: the failure is the exit code" },
    shown: "✗ opencode error: bad request: context too long",
    exit: "non-zero"
  },
  promise: () => [T.text("Read it all.\n", PROMISE)],
  interrupt: {
    // The model runs a command that would outlive opencode if only opencode were stopped.
    script: () => [T.call("bash", { command: "sleep 300", description: "Waits." }, "Waiting.")],
    flags: ["--allow-all"],
    running: (root) => processesIn(root),
    ready: (running) => running.some((p) => p.cmdline.includes("sleep 300")),
    check: (running) => {
      expect(running.some((p) => p.cmdline.includes("sleep 300"))).toBe(true)
      expect(running.some((p) => p.cmdline.includes("opencode-ai/bin/opencode"))).toBe(true)
    }
  },
  limit: { none: "opencode's limits run in guards.e2e.test.ts with a scripted opencode (a retry-after, a spent quota); its decoder in OpencodeLimit.test.ts" },
  permission: {
    // A rejected permission ends opencode's run: the second write is the second run's.
    script: (root) => [T.write(join(root, "denied.txt"), "nope\n"), T.write(join(root, "allowed.txt"), "yes\n"), T.text("Written.\n", PROMISE)],
    // opencode allows writes by default: the config asks instead.
    env: (server, home) =>
      opencodeEnv({ baseURL: server.baseURL, root: home, models: ["default-model", "other-model"], config: { permission: { "*": "ask" } } }),
    check: (result, server) => {
      expect(result.stderr).toMatch(/warning: .*permission.*--allow-all/)
      expect(server.requests.length).toBe(1)
    },
    allowed: { file: "allowed.txt", content: "yes\n" }
  }
}
