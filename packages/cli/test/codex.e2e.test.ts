import { describe, expect, it } from "@effect/vitest"
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
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { git, makeWorkspace, spawnSpool, spool } from "./support.js"

// The real codex binary, driven by `spool ralph`, against a fake Responses server on 127.0.0.1.
const PROMISE = "<promise>COMPLETE</promise>"
const change = "001-01_greeting-cli"

const withServer = async <A>(
  turns: ReadonlyArray<Turn>,
  body: (server: FakeResponsesServer, root: string, env: Record<string, string>) => Promise<A>
) => {
  const root = makeWorkspace()
  const server = await startFakeResponsesServer(turns)
  try {
    // CODEX_HOME lives beside the repository, so nothing of codex's lands in the work tree.
    const env = { ...codexEnv({ baseURL: server.baseURL, root: `${root}-codex` }), SPOOL_CODEX_BIN: CODEX_BIN }
    return await body(server, root, env)
  } finally {
    await server.close()
    rmSync(`${root}-codex`, { recursive: true, force: true })
  }
}

const run = ["--harness", "codex", "--model", TEST_MODEL, "--no-interactive"]
const statusJson = async (root: string) => JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)

describe("spool ralph --harness codex, with the real codex binary", () => {
  it("creates a file through a shell tool call, completes on the promise, commits the file, records tokens with cost unknown", () =>
    withServer(
      [T.shell("printf 'hello from codex\\n' > greeting.txt", "Writing greeting.txt."), T.text("The file is written.\n\n", PROMISE)],
      async (server, root, env) => {
        const result = await spool(["ralph", "Write greeting.txt.", "--change", "001-01", "--max-iterations", "3", ...run], { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe("hello from codex\n")
        expect(result.stdout).toContain("→ $ printf 'hello from codex\\n' > greeting.txt (exit 0)")
        expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
        expect(server.requests.length).toBe(2)
        expect(server.requests.every((r) => r.model === TEST_MODEL)).toBe(true)
        const prompt = server.requests[0]!.userTexts.join("\n")
        expect(prompt).toContain("Ralph loop: iteration 1 of at most 3")
        expect(prompt).toContain("# Add a greeting command")

        const status = await statusJson(root)
        expect(status.history[0].git).toMatchObject({ changedFiles: 1, files: ["greeting.txt"] })
        expect(status.history[0].commit).toBe(git(root, "rev-parse", "HEAD"))
        expect(git(root, "show", "--format=", "--name-only", "HEAD")).toBe("greeting.txt")
        // Two requests of 100 input (30 cached) and 20 output (5 reasoning) tokens each.
        expect(status.history[0].usage).toEqual({
          inputTokens: 140,
          outputTokens: 30,
          reasoningTokens: 10,
          cacheReadTokens: 60,
          cacheWriteTokens: 0,
          cost: null
        })
        expect(status.usage).toEqual({ tokens: 180, cost: null })
        const text = (await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout
        expect(text).toContain("usage:     180 tokens, cost unknown")
      }
    ))

  it("records a fatal model error as a failed iteration carrying the error, and goes on to the next", () =>
    withServer(
      [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
      async (_server, root, env) => {
        const result = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "3", ...run], { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toContain("error: bad request: context too long")
        const { history } = await statusJson(root)
        expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["failed", "complete"])
        expect(history[0].exitCode).not.toBe(0)
        expect(history[0].error).toBe("bad request: context too long")
        const journal = readFileSync(join(root, ".spool", ".state", "ralph", change, "errors.md"), "utf8")
        expect(journal).toContain("- error: bad request: context too long")
      }
    ))

  it("hands a 300 KiB proposal to the model whole", () =>
    withServer([T.text("Read it all.\n", PROMISE)], async (server, root, env) => {
      const line = "A requirement with \"quotes\", $dollars and `backticks`.\n"
      const proposal = `# Big proposal\n\nBEGIN-OF-PROPOSAL\n${line.repeat(Math.ceil((300 * 1024) / line.length))}END-OF-PROPOSAL\n`
      expect(proposal.length).toBeGreaterThan(300 * 1024)
      writeFileSync(join(root, ".spool", "changes", change, "proposal.md"), proposal)
      const result = await spool(["ralph", "x", "--change", "001-01", "--no-commit", ...run], { cwd: root, env })
      expect(result.code, result.stderr).toBe(0)
      expect(server.requests.length).toBe(1)
      expect(server.requests[0]!.userTexts.join("\n")).toContain(proposal.trimEnd())
    }))

  it("Ctrl-C stops codex's wrapper and its native child, and exits 130", () =>
    withServer([T.stall()], async (_server, root, env) => {
      const loop = spawnSpool(["ralph", "x", "--change", "001-01", ...run], { cwd: root, env })
      const done = new Promise<number | null>((resolve) => loop.on("close", (code) => resolve(code)))
      loop.stdout.resume()
      loop.stderr.resume()
      // Both carry `-C <root>` on their command lines; wait until the native binary runs.
      let running = processesMentioning(root)
      for (let i = 0; i < 3000 && !running.some((p) => p.cmdline.includes("vendor/")); i++) {
        await new Promise((r) => setTimeout(r, 10))
        running = processesMentioning(root)
      }
      expect(running.length).toBeGreaterThanOrEqual(2)
      loop.kill("SIGINT")
      expect(await done).toBe(130)
      expect(processesMentioning(root)).toEqual([])
      expect((await statusJson(root)).history.at(-1).outcome).toBe("interrupted")
    }))

  it("without codex, says how to install it and exits 1 before the first iteration", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", ...run], { cwd: root, env: { SPOOL_CODEX_BIN: join(root, "no-such-codex") } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("npm install -g @openai/codex")
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect((await statusJson(root)).history).toEqual([])
  })
})
