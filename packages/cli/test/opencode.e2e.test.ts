import { describe, expect, it } from "@effect/vitest"
import {
  FAKE_PROVIDER,
  type FakeModelServer,
  OPENCODE_BIN,
  opencodeEnv,
  startFakeModelServer,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeModelServer"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { makeWorkspace, spool } from "./support.js"

// The real opencode binary, driven by `spool ralph`, against a fake model server on 127.0.0.1.
const PROMISE = "<promise>COMPLETE</promise>"

const withServer = async <A>(turns: (root: string) => ReadonlyArray<Turn>, body: (server: FakeModelServer, root: string, env: Record<string, string>) => Promise<A>, config?: Record<string, unknown>, models?: ReadonlyArray<string>) => {
  const root = makeWorkspace()
  const server = await startFakeModelServer(turns(root))
  const sandbox = join(root, "..", `${root.split("/").pop()}-opencode`)
  mkdirSync(sandbox, { recursive: true })
  try {
    const env = {
      ...opencodeEnv({ baseURL: server.baseURL, root: sandbox, ...(config ? { config } : {}), ...(models ? { models } : {}) }),
      SPOOL_OPENCODE_BIN: OPENCODE_BIN
    }
    return await body(server, root, env)
  } finally {
    await server.close()
  }
}

const statusJson = async (root: string) => JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)

describe("spool ralph with the real opencode binary", () => {
  it("writes a file through opencode's write tool, completes on the promise, passes the model, asks for no title", () =>
    withServer(
      (root) => [T.write(join(root, "greeting.txt"), "hello from opencode\n"), T.text("The file is written.\n\n", PROMISE)],
      async (server, root, env) => {
        const result = await spool(
          ["ralph", "Write greeting.txt.", "--change", "001-01", "--model", `${FAKE_PROVIDER}/other-model`, "--allow-all", "--no-interactive", "--max-iterations", "3"],
          { cwd: root, env }
        )
        expect(result.code, result.stderr).toBe(0)
        expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe("hello from opencode\n")
        expect(result.stdout).toContain("→ write greeting.txt")
        expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
        expect(server.requests.length).toBe(2)
        expect(server.requests.every((r) => r.model === "other-model")).toBe(true)
        expect(server.requests.some((r) => r.isTitle)).toBe(false)
        // The whole prompt reached the model, preamble and proposal included.
        const user = server.requests[0]!.messages.filter((m) => m.role === "user").map((m) => m.text).join("\n")
        expect(user).toContain("Ralph loop: iteration 1 of at most 3")
        expect(user).toContain("# Add a greeting command")
        const status = await statusJson(root)
        expect(status.history[0].usage.inputTokens).toBeGreaterThan(0)
        expect(status.usage.tokens).toBeGreaterThan(0)
        const text = (await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout
        expect(text).toMatch(/usage: +\d+ tokens, \$\d+\.\d{4}/)
      },
      undefined,
      ["default-model", "other-model"]
    ))

  it("without --allow-all a write needing permission is rejected and the summary says so; with it the write happens", () =>
    withServer(
      (root) => [
        // A rejected permission ends opencode's run: no further request for the first iteration.
        T.write(join(root, "denied.txt"), "nope\n"),
        T.write(join(root, "allowed.txt"), "yes\n"),
        T.text("Written.\n", PROMISE)
      ],
      async (server, root, env) => {
        const denied = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "1", "--no-interactive"], { cwd: root, env })
        expect(denied.code).toBe(3)
        expect(existsSync(join(root, "denied.txt"))).toBe(false)
        expect(denied.stderr).toMatch(/warning: .*permission.*--allow-all/)
        expect((await statusJson(root)).history[0].warnings.join(" ")).toContain("--allow-all")
        expect(server.requests.length).toBe(1)

        const allowed = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "1", "--allow-all", "--no-interactive"], { cwd: root, env })
        expect(allowed.code, allowed.stderr).toBe(0)
        expect(readFileSync(join(root, "allowed.txt"), "utf8")).toBe("yes\n")
      },
      { permission: { "*": "ask" } }
    ))

  it("records a model error (HTTP 400) as a failed iteration and goes on to the next", () =>
    withServer(
      () => [T.error("bad request: context too long"), T.text("Recovered.\n", PROMISE)],
      async (_server, root, env) => {
        const result = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "3", "--no-interactive"], { cwd: root, env })
        expect(result.code, result.stderr).toBe(0)
        const { history } = await statusJson(root)
        expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["failed", "complete"])
        expect(history[0].exitCode).not.toBe(0)
      }
    ))

  it("with --verify, a claim completes only once the check passes: the first is rejected and the model is told why", () =>
    withServer(
      (root) => [
        T.text("All done.\n\n", PROMISE),
        T.write(join(root, "greeting.txt"), "hello\n"),
        T.text("greeting.txt is written now.\n\n", PROMISE)
      ],
      async (server, root, env) => {
        const check = "test -s greeting.txt || { echo \"FAIL: $(echo greeting).txt is missing\"; exit 1; }"
        const result = await spool(
          ["ralph", "Write greeting.txt.", "--change", "001-01", "--allow-all", "--no-interactive", "--max-iterations", "3", "--verify", check],
          { cwd: root, env }
        )
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toMatch(/--- iteration 1: .* \| promise rejected: verify failed: test -s greeting\.txt .* \(exit 1, /)
        expect(result.stdout).toMatch(/--- iteration 2: .* \| promise found, verified: test -s greeting\.txt .* \| .* -> complete/)
        const second = server.requests.at(-2)!.messages.filter((m) => m.role === "user").map((m) => m.text).join("\n")
        expect(second).toContain("FAIL: greeting.txt is missing")
        const { history } = await statusJson(root)
        expect(history.map((r: { outcome: string; verify: ReadonlyArray<{ passed: boolean }> }) => [r.outcome, r.verify.map((c) => c.passed)])).toEqual([
          ["failed", [false]],
          ["complete", [true]]
        ])
      }
    ))
})
