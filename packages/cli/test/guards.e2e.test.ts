import { describe, expect, it } from "@effect/vitest"
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { agentScript, git, makeWorkspace, spawnSpool, spool, stateDir } from "./support.js"

const change = "001-01_greeting-cli"
const fakeOpencode = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "fake-opencode.mjs")
chmodSync(fakeOpencode, 0o755)

interface Step {
  readonly events?: ReadonlyArray<object>
  readonly write?: Record<string, string>
  readonly exit?: number
  readonly hang?: boolean
}

/** The environment that makes `--harness opencode` run the fake opencode through `plan`. */
const opencodeEnv = (plan: ReadonlyArray<Step>) => {
  const dir = mkdtempSync(join(tmpdir(), "spool-fake-opencode-"))
  writeFileSync(join(dir, "plan.json"), JSON.stringify(plan))
  return { SPOOL_OPENCODE_BIN: fakeOpencode, FAKE_OPENCODE_PLAN: join(dir, "plan.json"), FAKE_OPENCODE_CALLS: join(dir, "calls") }
}

const text = (body: string) => ({ type: "text", part: { id: `p${Math.random()}`, type: "text", text: body } })
const stepFinish = (input: number, cost: number) => ({
  type: "step_finish",
  part: { type: "step-finish", tokens: { input, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }, cost }
})
const apiError = (message: string, headers: Record<string, string>, body = "") => ({
  type: "error",
  error: { name: "APIError", data: { message, statusCode: 429, isRetryable: true, responseHeaders: headers, responseBody: body } }
})
const completes: Step = { events: [text("Done. <promise>COMPLETE</promise>"), stepFinish(100, 0.01)] }

const opencode = ["--change", "001-01", "--no-interactive"]
const command = (script: string) => ["--change", "001-01", "--no-interactive", "--harness", "command", "--harness-command", agentScript(script)]

const statusJson = async (root: string) => JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)

describe("spend caps (the built binary, a scripted opencode)", () => {
  it("stops the agent mid-iteration at --max-cost, commits what it changed, names the cap and the totals, exits 4", async () => {
    const root = makeWorkspace()
    const env = opencodeEnv([
      { events: [text("working"), stepFinish(600, 0.6)] },
      { write: { [join(root, "second.txt")]: "half done\n" }, events: [stepFinish(600, 0.6)], hang: true }
    ])
    const result = await spool(["ralph", "x", ...opencode, "--max-cost", "1"], { cwd: root, env })
    expect(result.code, result.stderr).toBe(4)
    expect(result.stdout).toMatch(/--- iteration 2: stopped \|.*-> stopped/)
    expect(result.stdout).toMatch(/^stopped: --max-cost \$1\.00 reached \(\$1\.20 spent, 1200 tokens, .*\)$/m)
    const status = await statusJson(root)
    expect(status).toMatchObject({ status: "stopped", stopReason: "max-cost", guards: { maxCostUsd: 1, costUsd: 1.2, tokens: 1200 } })
    expect(status.history.map((r: { outcome: string }) => r.outcome)).toEqual(["continue", "stopped"])
    expect(status.history[1].commit).toBe(git(root, "rev-parse", "HEAD"))
    expect(git(root, "show", "--name-only", "--format=", "HEAD")).toBe("second.txt")
    expect(existsSync(join(stateDir(root, change), "lock"))).toBe(false)
  })

  it("stops at --max-tokens from the tokens opencode reports, exits 4", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", ...opencode, "--max-tokens", "1000"], { cwd: root, env: opencodeEnv([{ events: [text("working"), stepFinish(600, 0)] }]) })
    expect(result.code, result.stderr).toBe(4)
    expect(result.stdout).toMatch(/^stopped: --max-tokens 1000 reached \(\$0\.0000 spent, 1200 tokens, .*\)$/m)
    expect(await statusJson(root)).toMatchObject({ status: "stopped", stopReason: "max-tokens", iteration: 2 })
  })

  it("stops an agent still working when --max-duration is up, exits 4", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", ...command("console.log('thinking'); setInterval(() => {}, 1000)"), "--max-duration", "2s"], { cwd: root })
    expect(result.code, result.stderr).toBe(4)
    expect(result.stdout).toMatch(/^stopped: --max-duration 2\.0s reached/m)
    expect(await statusJson(root)).toMatchObject({ status: "stopped", stopReason: "max-duration", history: [{ iteration: 1, outcome: "stopped" }] })
  })

  it("refuses --max-cost with the command harness before anything runs, exits 2", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", ...command("console.log('x')"), "--max-cost", "5"], { cwd: root })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--max-cost needs a harness that reports cost, and the command harness does not")
    expect(existsSync(stateDir(root, change))).toBe(false)
  })
})

describe("breakers (the built binary)", () => {
  it("stops after --stall-iterations without progress, warning one iteration before and telling the agent, exits 4", async () => {
    const root = makeWorkspace()
    const prompts = join(mkdtempSync(join(tmpdir(), "spool-prompts-")), "prompts")
    const agent = `import { appendFileSync, readFileSync } from "node:fs"
appendFileSync(${JSON.stringify(prompts)}, readFileSync(0, "utf8") + "\\n=====\\n")
console.log("looked around, changed nothing")`
    const result = await spool(["ralph", "x", ...command(agent), "--stall-iterations", "3"], { cwd: root })
    expect(result.code, result.stderr).toBe(4)
    expect(result.stderr).toContain("warning: 2 iterations in a row made no progress")
    expect(result.stdout).toMatch(/^stopped: 3 iterations in a row made no progress \(--stall-iterations 3; cost unknown, 0 tokens, .*\)$/m)
    const sent = readFileSync(prompts, "utf8").split("\n=====\n")
    expect(sent[2]).toContain("- The last 2 iterations changed nothing")
    expect(await statusJson(root)).toMatchObject({ status: "stopped", stopReason: "stall", guards: { stallIterations: 3, stalledIterations: 3 } })
  })

  it("stops after --max-consecutive-failures naming the error they share, exits 1", async () => {
    const root = makeWorkspace()
    const agent = "console.error(`Error: connect ECONNREFUSED 127.0.0.1:${4000 + Number(process.env.SPOOL_ITERATION)}`); process.exit(1)"
    const result = await spool(["ralph", "x", ...command(agent), "--max-consecutive-failures", "3"], { cwd: root })
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split("\n").at(-1)).toBe(
      "spool: the same error 3 times in a row (--max-consecutive-failures 3): Error: connect ECONNREFUSED 127.0.0.1:4003; see spool ralph --status"
    )
    expect(await statusJson(root)).toMatchObject({ status: "failed", stopReason: "failures", iteration: 3, guards: { consecutiveFailures: 3 } })
  })
})

describe("usage limits (the built binary, a scripted opencode)", () => {
  it("waits out a limit whose retry-after is two seconds, then runs the same iteration again and completes, exit 0", async () => {
    const root = makeWorkspace()
    const env = opencodeEnv([{ events: [apiError("Rate limit reached for requests", { "retry-after": "2" })], exit: 1 }, completes])
    const result = await spool(["ralph", "x", ...opencode, "--fail-fast"], { cwd: root, env })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^waiting for the usage limit until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(retry-after\); Ctrl-C stops the loop$/m)
    expect(result.stdout).toMatch(/--- iteration 1: usage limit \|.*error: Rate limit reached for requests \| -> limited/)
    expect(result.stdout.match(/=== spool ralph: iteration 1\/20/g)).toHaveLength(2)
    const status = await statusJson(root)
    expect(status).toMatchObject({ status: "complete", stopReason: "complete", iteration: 1, resumeAt: null })
    expect(status.history.map((r: { iteration: number; outcome: string }) => [r.iteration, r.outcome])).toEqual([[1, "limited"], [1, "complete"]])
  })

  it("ends at once on a quota that does not reset, recording when to start again, exit 5", async () => {
    const root = makeWorkspace()
    const quota = apiError("You exceeded your current quota, please check your plan and billing details.", { "retry-after": "Tue, 01 Dec 2026 00:00:00 GMT" }, "{\"error\":{\"code\":\"insufficient_quota\"}}")
    const result = await spool(["ralph", "x", ...opencode], { cwd: root, env: opencodeEnv([{ events: [quota], exit: 1 }]) })
    expect(result.code, result.stderr).toBe(5)
    expect(result.stdout).toContain("stopped: the usage limit does not reset by waiting (You exceeded your current quota")
    expect(result.stdout).toContain("run spool again after 2026-12-01T00:01:00Z")
    expect(result.stdout).not.toContain("waiting for the usage limit")
    expect(await statusJson(root)).toMatchObject({ status: "usage-limit", stopReason: "usage-limit", resumeAt: "2026-12-01T00:01:00.000Z", history: [{ outcome: "limited" }] })
    expect((await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout).toContain("resume:    run spool again after 2026-12-01T00:01:00.000Z")
  })

  it("ends at once with --max-limit-wait 0, recording when it would have resumed, exit 5", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", ...opencode, "--max-limit-wait", "0"], { cwd: root, env: opencodeEnv([{ events: [apiError("slow down", { "retry-after": "3600" })], exit: 1 }]) })
    expect(result.code, result.stderr).toBe(5)
    const status = await statusJson(root)
    expect(status.status).toBe("usage-limit")
    expect(Date.parse(status.resumeAt) - Date.parse(status.history[0].startedAt)).toBeGreaterThanOrEqual(3_600_000)
  })

  it("Ctrl-C during a wait exits 130 at once with the lock released, and a second loop can start", async () => {
    const root = makeWorkspace()
    const env = opencodeEnv([{ events: [apiError("Rate limit reached", { "retry-after": "3600" })], exit: 1 }, completes])
    const loop = spawnSpool(["ralph", "x", ...opencode], { cwd: root, env })
    let out = ""
    loop.stdout.on("data", (d) => (out += d))
    const closed = new Promise<number | null>((resolve) => loop.on("close", (code) => resolve(code)))
    for (let i = 0; i < 3000 && !out.includes("waiting for the usage limit until"); i++) await new Promise((r) => setTimeout(r, 10))
    expect(out).toContain("waiting for the usage limit until")
    expect(await statusJson(root)).toMatchObject({ status: "waiting" })
    expect((await statusJson(root)).resumeAt).toMatch(/^\d{4}-/)
    loop.kill("SIGINT")
    // The wait is an hour long: the loop ending at all means it did not sit it out.
    expect(await closed).toBe(130)
    expect(existsSync(join(stateDir(root, change), "lock"))).toBe(false)
    expect(await statusJson(root)).toMatchObject({ status: "interrupted", stopReason: "interrupted", resumeAt: null })
    const second = await spool(["ralph", "x", ...opencode], { cwd: root, env })
    expect(second.code, second.stderr).toBe(0)
  })
})
