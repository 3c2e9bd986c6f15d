import { describe, expect, it } from "@effect/vitest"
import { COPILOT_BIN, copilotEnv, TEST_MODEL as COPILOT_MODEL } from "@spool/testkit/copilotEnv"
import { type FakeModelServer, startFakeModelServer, Turn as T } from "@spool/testkit/fakeModelServer"
import { QWEN_BIN, qwenEnv, TEST_MODEL as QWEN_MODEL } from "@spool/testkit/qwenEnv"
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { PROMISE } from "./agents/agent.js"
import { statusJson } from "./agents/scenarios.js"
import { git, makeWorkspace, spool } from "./support.js"

/*
 * Copilot CLI and Qwen Code as `--fallback` and `--review` take any agent: their real binaries,
 * each against a fake model server of its own, in one loop.
 */

type Script = Parameters<typeof startFakeModelServer>[0]

/** Runs `body` in a fresh workspace, copilot and qwen each against its own fake server answering its script. */
const withBoth = async (
  scripts: (root: string) => { readonly copilot: Script; readonly qwen: Script },
  body: (servers: { readonly copilot: FakeModelServer; readonly qwen: FakeModelServer }, root: string, env: Record<string, string>) => Promise<void>
) => {
  const root = makeWorkspace()
  const home = `${root}-agent`
  const script = scripts(root)
  const copilot = await startFakeModelServer(script.copilot)
  const qwen = await startFakeModelServer(script.qwen)
  try {
    const env = {
      ...copilotEnv({ baseURL: copilot.baseURL, root: home }),
      ...qwenEnv({ baseURL: qwen.baseURL, root: home }),
      SPOOL_COPILOT_BIN: COPILOT_BIN,
      SPOOL_QWEN_BIN: QWEN_BIN
    }
    await body({ copilot, qwen }, root, env)
  } finally {
    await Promise.all([copilot.close(), qwen.close()])
    rmSync(home, { recursive: true, force: true })
  }
}

const ralph = (...extra: ReadonlyArray<string>) => ["ralph", "Write greeting.txt.", "--change", "001-01", "--no-interactive", "--allow-all", "--max-iterations", "3", ...extra]

/** qwen writes greeting.txt with its tool, then says the promise. */
const qwenWrites = (root: string) => [
  T.call("write_file", { file_path: join(root, "greeting.txt"), content: "hello from qwen\n" }, "Writing greeting.txt."),
  T.text("The file is written.\n\n", PROMISE)
]

describe("copilot and qwen in one loop", () => {
  it("goes on with qwen (--fallback) in the same iteration when copilot meets a usage limit", () =>
    withBoth((root) => ({ copilot: () => T.limit("Rate limit reached for requests"), qwen: qwenWrites(root) }), async (servers, root, env) => {
      const result = await spool(ralph("--harness", "copilot", "--model", COPILOT_MODEL, "--fallback", `qwen:${QWEN_MODEL}`), { cwd: root, env })
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(0)
      expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe("hello from qwen\n")
      const status = await statusJson(root)
      expect(status.history.map((r: { iteration: number; agent: string; outcome: string }) => [r.iteration, r.agent, r.outcome])).toEqual([
        [1, `copilot:${COPILOT_MODEL}`, "limited"],
        [1, `qwen:${QWEN_MODEL}`, "complete"]
      ])
      expect(status.history[0].error).toBe("429 Rate limit reached for requests")
      expect(servers.copilot.requests.map((r) => r.model)).toContain(COPILOT_MODEL)
      expect(servers.qwen.requests.map((r) => r.model)).toEqual([QWEN_MODEL, QWEN_MODEL])
      expect(git(root, "status", "--porcelain")).toBe("")
    }))

  it("has copilot review qwen's work (--review): its approval completes the change, its review recorded", () =>
    withBoth((root) => ({ copilot: [T.text("Every task is done and tested.\n<verdict>approve</verdict>\n")], qwen: qwenWrites(root) }), async (servers, root, env) => {
      const result = await spool(ralph("--harness", "qwen", "--model", QWEN_MODEL, "--review", `copilot:${COPILOT_MODEL}`), { cwd: root, env })
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(0)
      expect(result.stdout).toContain(`review by copilot:${COPILOT_MODEL}: approved`)
      expect(result.stdout).toContain("complete: the promise was accepted at iteration 1 and approved by its review")
      // The reviewer read the change and its diff: qwen's file is in the prompt copilot's model got.
      const reviewPrompt = servers.copilot.requests[0]!.messages.filter((m) => m.role === "user").map((m) => m.text).join("\n")
      expect(reviewPrompt).toContain("# Review of change `001-01_greeting-cli`")
      expect(reviewPrompt).toContain("+hello from qwen")
      const status = await statusJson(root)
      expect(status.history.map((r: { reviews: Array<{ reviewer: string; verdict: string }> }) => r.reviews.map((v) => [v.reviewer, v.verdict]))).toEqual([
        [[`copilot:${COPILOT_MODEL}`, "approve"]]
      ])
      // copilot's tokens, read from its usage file, count as the review's spend.
      expect(status.history[0].reviews[0].usage).toMatchObject({ inputTokens: 70, cacheReadTokens: 30 })
    }))
})
