import { describe, expect, it } from "@effect/vitest"
import {
  type FakeGeminiServer,
  GEMINI_BIN,
  geminiEnv,
  startFakeGeminiServer,
  TEST_MODEL,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeGeminiServer"
import { processesIn, survives } from "@spool/testkit/processes"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { git, makeWorkspace, spawnSpool, spool, stateDir, withFakeServer, writeBigProposal } from "./support.js"

// The real gemini binary, driven by `spool ralph`, against a fake Gemini API on 127.0.0.1.
const PROMISE = "<promise>COMPLETE</promise>"
const change = "001-01_greeting-cli"

/** Runs `body` against a fake Gemini API answering `script(root)`: the turns may name files in the work tree. */
const withServer = <A>(
  script: (root: string) => ReadonlyArray<Turn>,
  body: (server: FakeGeminiServer, root: string, env: Record<string, string>) => Promise<A>
) =>
  withFakeServer(
    (root) => startFakeGeminiServer(script(root)),
    (server, home) => ({ ...geminiEnv({ baseURL: server.baseURL, root: home }), SPOOL_GEMINI_BIN: GEMINI_BIN }),
    body
  )

const run = ["--harness", "gemini", "--model", TEST_MODEL, "--no-interactive"]
const statusJson = async (root: string) => JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)

describe("spool ralph --harness gemini, with the real gemini binary", () => {
  it("writes a file with gemini's write_file tool, completes on the promise, commits it, passes the model, records tokens with cost unknown", () =>
    withServer(
      (root) => [T.write(join(root, "greeting.txt"), "hello from gemini\n", "Writing greeting.txt."), T.text("The file is written.\n\n", PROMISE)],
      async (server, root, env) => {
        const result = await spool(["ralph", "Write greeting.txt.", "--change", "001-01", "--max-iterations", "3", "--allow-all", ...run], { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe("hello from gemini\n")
        expect(result.stdout).toContain("→ write_file greeting.txt")
        expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
        expect(server.requests.length).toBe(2)
        expect(server.requests.every((r) => r.model === TEST_MODEL)).toBe(true)
        expect(server.requests[0]!.tools).toContain("write_file")
        const prompt = server.requests[0]!.userTexts.join("\n")
        expect(prompt).toContain("Ralph loop: iteration 1 of at most 3")
        expect(prompt).toContain("# Add a greeting command")

        const status = await statusJson(root)
        expect(status.history[0].git).toMatchObject({ changedFiles: 1, files: ["greeting.txt"] })
        expect(status.history[0].commit).toBe(git(root, "rev-parse", "HEAD"))
        expect(git(root, "show", "--format=", "--name-only", "HEAD")).toBe("greeting.txt")
        // Two requests of 100 prompt (30 cached), 20 candidate and 5 thinking tokens each.
        expect(status.history[0].usage).toEqual({
          inputTokens: 140,
          outputTokens: 40,
          reasoningTokens: 10,
          cacheReadTokens: 60,
          cacheWriteTokens: 0,
          cost: null
        })
        expect(status.usage).toEqual({ tokens: 190, cost: null })
        expect((await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout).toContain("usage:     190 tokens, cost unknown")
      }
    ))

  it("without --allow-all gemini offers no write tool: the write does not happen and spool warns", () =>
    withServer(
      (root) => [T.write(join(root, "denied.txt"), "nope\n"), T.text("I could not write it.")],
      async (server, root, env) => {
        const result = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "1", ...run], { cwd: root, env })
        expect(result.code, result.stderr).toBe(3)
        expect(existsSync(join(root, "denied.txt"))).toBe(false)
        expect(server.requests[0]!.tools).not.toContain("write_file")
        expect(result.stdout).toContain("✗ write_file denied.txt: Tool \"write_file\" not found")
        expect(result.stderr).toMatch(/warning: gemini did not run a tool call that needs approval \(write_file denied\.txt\).*--allow-all/)
        expect((await statusJson(root)).history[0].warnings.join(" ")).toContain("--allow-all")
      }
    ))

  it("records a model error (HTTP 400) as a failed iteration carrying the API's message, and goes on to the next", () =>
    withServer(
      () => [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
      async (_server, root, env) => {
        const result = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "3", ...run], { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toContain("✗ bad request: context too long (HTTP 400)")
        const { history } = await statusJson(root)
        expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["failed", "complete"])
        expect(history[0].error).toBe("bad request: context too long (HTTP 400)")
        expect(history[1].error).toBeNull()
        const journal = readFileSync(join(stateDir(root, change), "errors.md"), "utf8")
        expect(journal).toContain("- error: bad request: context too long (HTTP 400)")
      }
    ))

  it("hands a 300 KiB proposal to the model whole", () =>
    withServer(() => [T.text("Read it all.\n", PROMISE)], async (server, root, env) => {
      const proposal = writeBigProposal(root)
      expect(proposal.length).toBeGreaterThan(300 * 1024)
      const result = await spool(["ralph", "x", "--change", "001-01", "--no-commit", ...run], { cwd: root, env })
      expect(result.code, result.stderr).toBe(0)
      expect(server.requests.length).toBe(1)
      expect(server.requests[0]!.userTexts.join("\n")).toContain(proposal.trimEnd())
    }))

  it("Ctrl-C stops gemini and every process it started, and exits 130", () =>
    withServer(() => [T.stall()], async (server, root, env) => {
      const loop = spawnSpool(["ralph", "x", "--change", "001-01", ...run], { cwd: root, env })
      const done = new Promise<number | null>((resolve) => loop.on("close", (code) => resolve(code)))
      loop.stdout.resume()
      loop.stderr.resume()
      // Once the model request arrives, gemini (and the node process it starts) runs in the work tree.
      for (let i = 0; i < 6000 && server.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
      const running = processesIn(root).filter((p) => p.cmdline.includes("gemini"))
      // gemini relaunches itself as a child node process (with a larger heap): both must go.
      expect(running.length).toBeGreaterThanOrEqual(2)
      loop.kill("SIGINT")
      expect(await done).toBe(130)
      expect(processesIn(root)).toEqual([])
      for (const { pid, cmdline } of running) expect(await survives(pid), `${cmdline} survived`).toBe(false)
      expect((await statusJson(root)).history.at(-1).outcome).toBe("interrupted")
    }))

  it("without gemini, says how to install it and exits 1 before the first iteration", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", ...run], { cwd: root, env: { SPOOL_GEMINI_BIN: join(root, "no-such-gemini") } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("npm install -g @google/gemini-cli")
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect((await statusJson(root)).history).toEqual([])
  })
})
