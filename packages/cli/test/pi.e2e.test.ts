import { describe, expect, it } from "@effect/vitest"
import { type FakeModelServer, startFakeModelServer, type Turn, Turn as T } from "@spool/testkit/fakeModelServer"
import { PI_BIN, piEnv, TEST_MODEL, TEST_MODEL_ID } from "@spool/testkit/piEnv"
import { processesIn, survives } from "@spool/testkit/processes"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { git, makeWorkspace, spawnSpool, spool, stateDir, withFakeServer, writeBigProposal } from "./support.js"

// The real pi binary, driven by `spool ralph`, against a fake OpenAI-compatible server on 127.0.0.1.
const PROMISE = "<promise>COMPLETE</promise>"
const change = "001-01_greeting-cli"

/** Runs `body` against a fake OpenAI-compatible server answering `script(root)`: the turns may name files in the work tree. */
const withServer = <A>(
  script: (root: string) => ReadonlyArray<Turn>,
  body: (server: FakeModelServer, root: string, env: Record<string, string>) => Promise<A>
) =>
  withFakeServer(
    (root) => startFakeModelServer(script(root)),
    (server, home) => ({ ...piEnv({ baseURL: server.baseURL, root: home }), SPOOL_PI_BIN: PI_BIN }),
    body
  )

const run = ["--harness", "pi", "--model", TEST_MODEL, "--no-interactive"]
const statusJson = async (root: string) => JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)
const userText = (server: FakeModelServer, i: number) => server.requests[i]!.messages.filter((m) => m.role === "user").map((m) => m.text).join("\n")

describe("spool ralph --harness pi, with the real pi binary", () => {
  it("writes a file with pi's write tool, completes on the promise, commits it, passes the model, records tokens and cost", () =>
    withServer(
      (root) => [T.call("write", { path: join(root, "greeting.txt"), content: "hello from pi\n" }, "Writing greeting.txt."), T.text("The file is written.\n\n", PROMISE)],
      async (server, root, env) => {
        const result = await spool(["ralph", "Write greeting.txt.", "--change", "001-01", "--max-iterations", "3", ...run], { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe("hello from pi\n")
        expect(result.stdout).toContain("→ write greeting.txt")
        expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
        expect(server.requests.length).toBe(2)
        expect(server.requests.every((r) => r.model === TEST_MODEL_ID)).toBe(true)
        const prompt = userText(server, 0)
        expect(prompt).toContain("Ralph loop: iteration 1 of at most 3")
        expect(prompt).toContain("# Add a greeting command")

        const status = await statusJson(root)
        expect(status.history[0].git).toMatchObject({ changedFiles: 1, files: ["greeting.txt"] })
        expect(status.history[0].commit).toBe(git(root, "rev-parse", "HEAD"))
        expect(git(root, "show", "--format=", "--name-only", "HEAD")).toBe("greeting.txt")
        // Two requests of 100 prompt tokens (30 cached) and 20 completion tokens, priced by models.json.
        expect(status.history[0].usage).toMatchObject({ inputTokens: 140, outputTokens: 40, reasoningTokens: 0, cacheReadTokens: 60, cacheWriteTokens: 0 })
        expect(status.history[0].usage.cost).toBeCloseTo(2 * 0.000519, 9)
        expect(status.usage.tokens).toBe(180)
        expect(status.usage.cost).toBeCloseTo(2 * 0.000519, 9)
        expect((await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout).toMatch(/usage: +180 tokens, \$0\.0010/)
      }
    ))

  it("records a model error (HTTP 400) as a failed iteration carrying the provider's message, and goes on to the next", () =>
    withServer(
      () => [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
      async (_server, root, env) => {
        const result = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "3", ...run], { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toContain("✗ pi: 400 bad request: context too long")
        const { history } = await statusJson(root)
        expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["failed", "complete"])
        expect(history[0].error).toBe("400 bad request: context too long")
        expect(history[1].error).toBeNull()
        const journal = readFileSync(join(stateDir(root, change), "errors.md"), "utf8")
        expect(journal).toContain("- error: 400 bad request: context too long")
      }
    ))

  it("hands a 300 KiB proposal to the model whole", () =>
    withServer(() => [T.text("Read it all.\n", PROMISE)], async (server, root, env) => {
      const proposal = writeBigProposal(root)
      expect(proposal.length).toBeGreaterThan(300 * 1024)
      const result = await spool(["ralph", "x", "--change", "001-01", "--no-commit", ...run], { cwd: root, env })
      expect(result.code, result.stderr).toBe(0)
      expect(server.requests.length).toBe(1)
      expect(userText(server, 0)).toContain(proposal.trimEnd())
    }))

  it("Ctrl-C stops pi and the command it runs, and exits 130", () =>
    withServer(
      // The model runs a command that would outlive pi if only pi were stopped.
      () => [T.call("bash", { command: "sleep 300" }, "Waiting.")],
      async (server, root, env) => {
        const loop = spawnSpool(["ralph", "x", "--change", "001-01", ...run], { cwd: root, env })
        const done = new Promise<number | null>((resolve) => loop.on("close", (code) => resolve(code)))
        loop.stdout.resume()
        loop.stderr.resume()
        let running = processesIn(root)
        for (let i = 0; i < 6000 && !running.some((p) => p.cmdline.includes("sleep 300")); i++) {
          await new Promise((r) => setTimeout(r, 10))
          running = processesIn(root)
        }
        expect(server.requests.length).toBe(1)
        expect(running.some((p) => p.cmdline.includes("sleep 300"))).toBe(true)
        expect(running.some((p) => p.cmdline.includes("pi"))).toBe(true)
        loop.kill("SIGINT")
        expect(await done).toBe(130)
        expect(processesIn(root)).toEqual([])
        for (const { pid, cmdline } of running) expect(await survives(pid), `${cmdline} survived`).toBe(false)
        expect((await statusJson(root)).history.at(-1).outcome).toBe("interrupted")
      }
    ))

  it("without pi, says how to install it and exits 1 before the first iteration", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", ...run], { cwd: root, env: { SPOOL_PI_BIN: join(root, "no-such-pi") } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("npm install -g @mariozechner/pi-coding-agent")
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect((await statusJson(root)).history).toEqual([])
  })
})
