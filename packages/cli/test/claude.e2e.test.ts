import { describe, expect, it } from "@effect/vitest"
import {
  byTurn,
  CLAUDE_BIN,
  claudeEnv,
  type FakeAnthropicServer,
  Reply,
  type Script,
  startFakeAnthropicServer
} from "@spool/testkit/fakeAnthropicServer"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { git, makeWorkspace, spool, stateDir } from "./support.js"

// The real claude binary, driven by `spool ralph --harness claude`, against a fake Anthropic server on 127.0.0.1.
const PROMISE = "<promise>COMPLETE</promise>"
const CHANGE = "001-01_greeting-cli"

const withServer = async <A>(script: Script, body: (server: FakeAnthropicServer, root: string, env: Record<string, string>) => Promise<A>) => {
  const root = makeWorkspace()
  const server = await startFakeAnthropicServer(script)
  const sandbox = join(root, "..", `${root.split("/").pop()}-claude`)
  mkdirSync(sandbox, { recursive: true })
  try {
    // claudeEnv sets IS_SANDBOX=1: these tests run as root in CI, and --allow-all needs it there.
    const env = { ...claudeEnv({ baseURL: server.baseURL, root: sandbox }), SPOOL_CLAUDE_BIN: CLAUDE_BIN }
    return await body(server, root, env)
  } finally {
    await server.close()
  }
}

const ralph = (...args: Array<string>) => ["ralph", ...args, "--change", "001-01", "--harness", "claude", "--no-interactive"]
const statusJson = async (root: string) => JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)
const userTexts = (server: FakeAnthropicServer, index = 0) =>
  server.requests[index]!.messages.filter((m) => m.role === "user").flatMap((m) => m.texts)

describe("spool ralph --harness claude with the real claude binary", () => {
  it("writes a file with claude's Write tool, completes on the promise, commits it, passes the model, records tokens and cost", () =>
    withServer(
      byTurn(Reply.write("greeting.txt", "hello from claude\n"), Reply.text("The file is written.\n\n", PROMISE)),
      async (server, root, env) => {
        const result = await spool(ralph("Write greeting.txt.", "--model", "claude-test-model", "--allow-all", "--max-iterations", "3"), { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe("hello from claude\n")
        expect(result.stdout).toContain("→ Write greeting.txt")
        expect(result.stdout).toMatch(/--- iteration 1: exit 0 \| .* \| promise found \| 1 file changed \|/)
        expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
        expect(git(root, "show", "--name-only", "--format=", "HEAD").split("\n")).toContain("greeting.txt")
        expect(git(root, "status", "--porcelain")).toBe("")
        // One tool call: the request with the prompt and the one with the tool result, both with the chosen model.
        expect(server.requests.map((r) => [r.path, r.model])).toEqual([
          ["/v1/messages?beta=true", "claude-test-model"],
          ["/v1/messages?beta=true", "claude-test-model"]
        ])
        const user = userTexts(server).join("\n")
        expect(user).toContain("Ralph loop: iteration 1 of at most 3")
        expect(user).toContain("# Add a greeting command")
        const status = await statusJson(root)
        expect(status.history[0].usage).toMatchObject({ inputTokens: 200, outputTokens: 40, cacheReadTokens: 60, cacheWriteTokens: 20 })
        expect(status.history[0].usage.cost).toBeGreaterThan(0)
        expect(status.usage.tokens).toBe(240)
        expect(status.usage.cost).toBeGreaterThan(0)
        const text = (await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout
        expect(text).toMatch(/usage: +240 tokens, \$\d+\.\d{4}/)
      }
    ))

  it("without --allow-all the write is denied and the summary says so", () =>
    withServer(
      byTurn(Reply.write("denied.txt", "nope\n"), Reply.text("I could not write it.")),
      async (_server, root, env) => {
        const denied = await spool(ralph("x", "--max-iterations", "1"), { cwd: root, env })
        expect(denied.code, denied.stderr).toBe(3)
        expect(existsSync(join(root, "denied.txt"))).toBe(false)
        expect(denied.stdout).toContain("✗ Write denied.txt: permission denied")
        expect(denied.stderr).toMatch(/warning: claude denied a tool call that needs permission \(Write denied\.txt\).*--allow-all/)
        expect((await statusJson(root)).history[0].warnings.join(" ")).toContain("--allow-all")
      }
    ))

  it("records a model error (HTTP 400) as a failed iteration carrying the API error, and goes on to the next", () =>
    withServer(
      // claude repeats a rejected request a few times: every request of iteration 1 gets the error.
      ({ prompt }) => prompt.includes("Ralph loop: iteration 1 ") ? Reply.error("bad request: context too long") : Reply.text("Recovered.\n", PROMISE),
      async (_server, root, env) => {
        const result = await spool(ralph("x", "--max-iterations", "3"), { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        const { history } = await statusJson(root)
        expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["failed", "complete"])
        expect(history[0].exitCode).not.toBe(0)
        expect(history[0].error).toMatch(/^API Error: 400 .*bad request: context too long/)
        expect(history[1].error).toBeNull()
        expect(result.stdout).toMatch(/--- iteration 1: exit 1 \| .*error: API Error: 400 .*bad request: context too long/)
        const journal = readFileSync(join(stateDir(root, CHANGE), "errors.md"), "utf8")
        expect(journal).toMatch(/- error: API Error: 400 .*bad request: context too long/)
      }
    ))

  it("a 300 KiB proposal reaches the model whole", () =>
    withServer(
      byTurn(Reply.text("Read it all.\n", PROMISE)),
      async (server, root, env) => {
        const filler = "A line of the proposal with \"quotes\", $dollars, `backticks` and <tags>.\n"
        const proposal = `# Big proposal\n\nBEGIN-OF-PROPOSAL\n${filler.repeat(Math.ceil((300 * 1024) / filler.length))}END-OF-PROPOSAL\n`
        writeFileSync(join(root, ".spool", "changes", CHANGE, "proposal.md"), proposal)
        git(root, "commit", "-qam", "a big proposal")
        const result = await spool(ralph("x", "--max-iterations", "1"), { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(proposal.length).toBeGreaterThan(300 * 1024)
        const user = userTexts(server).join("\n")
        expect(user).toContain(proposal.trim())
      }
    ))
})
