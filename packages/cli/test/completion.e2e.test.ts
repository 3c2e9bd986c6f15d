import { describe, expect, it } from "@effect/vitest"
import {
  type FakeModelServer,
  OPENCODE_BIN,
  opencodeEnv,
  startFakeModelServer,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeModelServer"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { agentScript, makeWorkspace, spool } from "./support.js"

// The completion rule end to end: the built `spool`, a real agent process (a command, or the real
// opencode binary against a fake model server), and what the loop decides.

const CLAIM = "I wrote hello.txt. <promise>COMPLETE</promise>"
const DEFERRED = "I will print <promise>COMPLETE</promise> once the tests pass"

const history = async (root: string) =>
  JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout).history as ReadonlyArray<{
    readonly outcome: string
    readonly completionDetected: boolean
    readonly promises: ReadonlyArray<{ readonly accepted: boolean; readonly reason: string }>
  }>

const runCommand = (root: string, command: string, maxIterations = 2) =>
  spool(
    ["ralph", "x", "--change", "001-01", "--harness", "command", "--harness-command", command, "--max-iterations", String(maxIterations), "--no-interactive"],
    { cwd: root }
  )

describe("completion through the command harness", () => {
  it("completes in iteration 1 on a claim after a finished sentence on the same line", async () => {
    const root = makeWorkspace()
    const agent = agentScript(`import { writeFileSync } from "node:fs"\nwriteFileSync("hello.txt", "hello\\n")\nconsole.log(${JSON.stringify(CLAIM)})\n`)
    const result = await runCommand(root, agent)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/--- iteration 1: exit 0 \| .* \| promise found \| 1 file changed/)
    expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
    expect(readFileSync(join(root, "hello.txt"), "utf8")).toBe("hello\n")
  })

  it("runs on when the agent echoes its prompt, saying why", async () => {
    const root = makeWorkspace()
    const result = await runCommand(root, "cat")
    expect(result.code).toBe(3)
    expect(result.stdout).toContain("promise ignored: echo of the prompt")
    expect((await history(root)).map((r) => [r.outcome, r.promises.map((p) => p.reason)])).toEqual([
      ["continue", ["echo of the prompt"]],
      // The second prompt's notes quote the first echo and say how to claim: echoed too, and recognised as such.
      ["continue", ["echo of the prompt", "echo of the prompt", "echo of the prompt"]]
    ])
  })

  it("runs on when the agent defers the promise, saying why", async () => {
    const root = makeWorkspace()
    const result = await runCommand(root, agentScript(`console.log(${JSON.stringify(DEFERRED)})\n`), 1)
    expect(result.code).toBe(3)
    expect(result.stdout).toContain('promise ignored: deferred: "once the tests pass"')
  })

  it("never completes on a claim whose run failed, and tells the agent in the next prompt", async () => {
    const root = makeWorkspace()
    const agent = agentScript(
      `import { readFileSync } from "node:fs"\nconst prompt = readFileSync(0, "utf8")\n` +
        `if (process.env.SPOOL_ITERATION === "1") { console.log(${JSON.stringify(CLAIM)}); process.exit(1) }\n` +
        `if (prompt.includes("the claim was set aside")) console.log(${JSON.stringify(CLAIM)})\n`
    )
    const result = await runCommand(root, agent, 3)
    expect(result.stdout).toMatch(/--- iteration 1: exit 1 \| .* \| promise set aside: the run failed/)
    expect(result.code, result.stdout).toBe(0)
    expect((await history(root)).map((r) => [r.completionDetected, r.outcome])).toEqual([[false, "failed"], [true, "complete"]])
  })
})

const withOpencode = async (
  turns: (root: string) => ReadonlyArray<Turn>,
  body: (server: FakeModelServer, root: string, env: Record<string, string>) => Promise<void>
) => {
  const root = makeWorkspace()
  const server = await startFakeModelServer(turns(root))
  const sandbox = join(root, "..", `${root.split("/").pop()}-opencode`)
  mkdirSync(sandbox, { recursive: true })
  try {
    await body(server, root, { ...opencodeEnv({ baseURL: server.baseURL, root: sandbox }), SPOOL_OPENCODE_BIN: OPENCODE_BIN })
  } finally {
    await server.close()
  }
}

const runOpencode = (root: string, env: Record<string, string>, maxIterations: number) =>
  spool(["ralph", "x", "--change", "001-01", "--allow-all", "--max-iterations", String(maxIterations), "--no-interactive"], { cwd: root, env })

describe("completion through the real opencode binary", () => {
  it("completes in iteration 1 when the model ends its message with the promise", () =>
    withOpencode((root) => [T.write(join(root, "hello.txt"), "hello\n"), T.text(CLAIM)], async (_server, root, env) => {
      const result = await runOpencode(root, env, 3)
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toMatch(/--- iteration 1: exit 0 \| .* \| promise found \| 1 file changed/)
      expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
      expect(existsSync(join(root, "hello.txt"))).toBe(true)
    }))

  it("runs on when the model echoes the prompt, saying why", () =>
    withOpencode(() => [T.echo()], async (server, root, env) => {
      const result = await runOpencode(root, env, 1)
      expect(result.code, result.stderr).toBe(3)
      // The model really did repeat the prompt, promise rule included.
      expect(server.requests[0]!.messages.some((m) => m.text.includes("<promise>COMPLETE</promise>"))).toBe(true)
      expect(result.stdout).toContain("promise ignored: echo of the prompt")
    }))

  it("runs on when the model defers the promise, saying why", () =>
    withOpencode(() => [T.text(DEFERRED)], async (_server, root, env) => {
      const result = await runOpencode(root, env, 1)
      expect(result.code, result.stderr).toBe(3)
      expect(result.stdout).toContain('promise ignored: deferred: "once the tests pass"')
      expect((await history(root))[0]!.promises).toEqual([{ accepted: false, reason: 'deferred: "once the tests pass"', text: DEFERRED }])
    }))
})
