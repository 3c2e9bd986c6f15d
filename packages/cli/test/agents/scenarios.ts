import * as NodeContext from "@effect/platform-node/NodeContext"
import { HistoryStore, makeRedactor, Workspace } from "@spool/core"
import { expect, it } from "@effect/vitest"
import { processesIn, processesMentioning, remaining, survives } from "@spool/testkit/processes"
import { Effect, Layer } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { git, makeWorkspace, spawnSpool, spool, type SpoolResult, stateDir, withFakeServer, writeBigProposal } from "../support.js"
import { serveDashboard } from "../../src/serve/DashboardServer.js"
import { type Agent, CHANGE, type Closable, type Shown } from "./agent.js"

/*
 * The scenarios every agent runs, its real binary against its fake model server: each agent's test
 * file calls `agentScenarios` with its description, so vitest runs the agents side by side.
 */

export const statusJson = async (root: string) =>
  JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)

export const statusText = async (root: string) => (await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout

/** `spool ralph <prompt>` on the example change with the agent, and `extra` flags. */
export const ralph = <Script, Server extends Closable>(
  agent: Agent<Script, Server>,
  prompt: string,
  ...extra: Array<string>
) => ["ralph", prompt, "--change", "001-01", ...agent.flags, "--no-interactive", ...extra]

/** Runs `body` in a fresh workspace against the agent's fake server answering `script(root)`. */
export const withAgent = <Script, Server extends Closable, A>(
  agent: Agent<Script, Server>,
  script: (root: string) => Script,
  body: (server: Server, root: string, env: Record<string, string>) => Promise<A>,
  env: (server: Server, home: string) => Record<string, string> = agent.env
) =>
  withFakeServer(
    (root) => agent.start(script(root)),
    (server, home) => ({ ...env(server, home), [agent.bin.variable]: agent.bin.path }),
    body
  )

/** The agent's output on the dashboard's page of the example change: its server run in this process on `root`, asked over HTTP. */
const dashboardOutput = (root: string) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const plan = { alone: true, host: "127.0.0.1", port: 0, token: null, loopback: true }
    const { port } = yield* serveDashboard(plan, makeRedactor({}))
    const detail = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/api/loops/${CHANGE}`).then((reply) => reply.json()))
    return (detail as { readonly output: { readonly text: string } }).output.text
  })).pipe(Effect.provide(HistoryStore.layer.pipe(Layer.provideMerge(Workspace.layer(root)), Layer.provideMerge(NodeContext.layer)))))

export const expectShown = (text: string, shown: Shown) =>
  typeof shown === "string" ? expect(text).toContain(shown) : expect(text).toMatch(shown)

const waitFor = async (ready: () => boolean) => {
  for (let i = 0; i < 6000 && !ready(); i++) await new Promise((r) => setTimeout(r, 10))
}

/**
 * The write scenario under `--sandbox` with `extra` flags: the agent completes the change inside
 * the walls, its only way out the sandbox's proxy to `hosts`, and `--status --json` names them.
 * Returns the server and the status, for the agent's own checks.
 */
export const sandboxedWrite = <Script, Server extends Closable>(
  agent: Agent<Script, Server>,
  extra: (server: Server) => ReadonlyArray<string>,
  hosts: (server: Server) => ReadonlyArray<string>
) =>
  withAgent(agent, agent.write.script, async (server, root, env) => {
    const args = ralph(agent, "Write greeting.txt.", "--max-iterations", "3", ...agent.write.flags, "--sandbox", ...extra(server))
    const result = await spool(args, { cwd: root, env })
    // What the agent met inside the walls is in its output: stdout.
    expect(result.code, `${result.stderr}${result.stdout}`).toBe(0)
    expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
    expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe(`hello from ${agent.name}\n`)
    expect(git(root, "show", "--format=", "--name-only", "HEAD")).toBe("greeting.txt")
    expect(git(root, "status", "--porcelain")).toBe("")
    expect(agent.requests(server).map((r) => r.model)).toEqual([agent.model, agent.model])
    const status = await statusJson(root)
    expect(status.sandbox).toMatchObject({ runtime: "bubblewrap", hosts: hosts(server) })
    return { server, status }
  })

export const agentScenarios = <Script, Server extends Closable>(agent: Agent<Script, Server>) => {
  const requests = agent.requests

  it(`writes a file with ${agent.name}'s own tool, completes on the promise, commits it, passes the model, records tokens and cost as ${agent.name} reports them`, () =>
    withAgent(agent, agent.write.script, async (server, root, env) => {
      const result = await spool(ralph(agent, "Write greeting.txt.", "--max-iterations", "3", ...agent.write.flags), { cwd: root, env })
      expect(result.code, result.stderr).toBe(0)
      expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe(`hello from ${agent.name}\n`)
      expectShown(result.stdout, agent.write.shown)
      expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
      // One tool call: the request with the prompt and the one with the tool's result, both with the chosen model.
      expect(requests(server).map((r) => r.model)).toEqual([agent.model, agent.model])
      // The whole prompt reached the model, preamble and proposal included.
      expect(requests(server)[0]!.prompt).toContain("Ralph loop: iteration 1 of at most 3")
      expect(requests(server)[0]!.prompt).toContain("# Add a greeting command")

      const status = await statusJson(root)
      expect(status.history[0].git).toMatchObject({ changedFiles: 1, files: ["greeting.txt"] })
      expect(status.history[0].commit).toBe(git(root, "rev-parse", "HEAD"))
      expect(git(root, "show", "--format=", "--name-only", "HEAD")).toBe("greeting.txt")
      expect(git(root, "status", "--porcelain")).toBe("")
      await agent.write.check({ server, root, result, status, statusText: await statusText(root) })
      // The dashboard shows the agent's output as the terminal did: the agent's events read as lines, not its JSON.
      const output = await dashboardOutput(root)
      expectShown(output, agent.write.shown)
      expect(output).toContain("<promise>COMPLETE</promise>")
      expect(output).not.toMatch(/^\{"/m)
    }))

  const carrying = "carried" in agent.failure.error ? " carrying the error" : ""
  it(`records a model error (HTTP 400) as a failed iteration${carrying}, and goes on to the next`, () =>
    withAgent(agent, agent.failure.script, async (_server, root, env) => {
      const result = await spool(ralph(agent, "x", "--max-iterations", "3"), { cwd: root, env })
      expect(result.code, result.stderr).toBe(0)
      expectShown(result.stdout, agent.failure.shown)
      const { history } = await statusJson(root)
      expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["failed", "complete"])
      if (agent.failure.exit === "non-zero") expect(history[0].exitCode).not.toBe(0)
      else expect(history[0].exitCode).toBe(0)
      expect(history[1].error).toBeNull()
      if ("carried" in agent.failure.error) {
        expectShown(history[0].error, agent.failure.error.carried)
        const journal = readFileSync(join(stateDir(root, CHANGE), "errors.md"), "utf8")
        expect(journal).toContain(`- error: ${history[0].error}`)
      } else {
        expect(history[0].error).toBeNull()
      }
    }))

  it("hands a 300 KiB proposal to the model whole", () =>
    withAgent(agent, agent.promise, async (server, root, env) => {
      const proposal = writeBigProposal(root)
      git(root, "commit", "-qam", "a big proposal")
      expect(proposal.length).toBeGreaterThan(300 * 1024)
      const result = await spool(ralph(agent, "x", "--max-iterations", "1"), { cwd: root, env })
      expect(result.code, result.stderr).toBe(0)
      expect(requests(server).length).toBe(1)
      expect(requests(server)[0]!.prompt).toContain(proposal.trimEnd())
    }))

  it(`Ctrl-C stops ${agent.name} and every process it started, and exits 130`, () =>
    withAgent(agent, agent.interrupt.script, async (server, root, env) => {
      const loop = spawnSpool(ralph(agent, "x", ...agent.interrupt.flags), { cwd: root, env })
      const done = new Promise<number | null>((resolve) => loop.on("close", (code) => resolve(code)))
      loop.stdout.resume()
      loop.stderr.resume()
      try {
        let running = agent.interrupt.running(root)
        await waitFor(() => agent.interrupt.ready((running = agent.interrupt.running(root)), server))
        agent.interrupt.check(running, server)
        loop.kill("SIGINT")
        expect(await done).toBe(130)
        expect(await remaining(() => processesIn(root))).toEqual([])
        expect(await remaining(() => processesMentioning(root))).toEqual([])
        for (const { cmdline, pid } of running) expect(await survives(pid), `${cmdline} survived`).toBe(false)
        expect((await statusJson(root)).history.at(-1).outcome).toBe("interrupted")
      } finally {
        // A check that failed before the Ctrl-C must not leave the loop and its agent running.
        if (loop.exitCode === null && loop.signalCode === null) loop.kill("SIGINT")
      }
    }))

  it(`without ${agent.name}, says how to install it and exits 1 before the first iteration`, async () => {
    const root = makeWorkspace()
    const result = await spool(ralph(agent, "x"), { cwd: root, env: { [agent.bin.variable]: join(root, `no-such-${agent.name}`) } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(agent.bin.install)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect((await statusJson(root)).history).toEqual([])
  })

  const limit = agent.limit
  if ("script" in limit) {
    it(`reads ${agent.name}'s usage limit as one while it still retries: the iteration is limited, and with --max-limit-wait 0 the loop ends, to resume after the reset; exit 5`, () =>
      withAgent(agent, limit.script, async (server, root, env) => {
        const before = Date.now()
        const result = await spool(ralph(agent, "x", "--max-iterations", "3", "--max-limit-wait", "0"), { cwd: root, env })
        const after = Date.now()
        expect(result.code, `${result.stderr}${result.stdout}`).toBe(5)
        const status = await statusJson(root)
        expect(status).toMatchObject({ status: "usage-limit", stopReason: "usage-limit", history: [{ outcome: "limited" }] })
        expectShown(status.history[0].error, limit.error)
        // The reset, plus the minute spool adds to a reset time (not to a retry-after): between the
        // reset as seen from the run's start and from its end.
        const margin = limit.readAs === "retry-after" ? 0 : 60_000
        const resumeAt = Date.parse(status.resumeAt)
        expect(resumeAt).toBeGreaterThanOrEqual(before + limit.resetsInMs + margin - 1000)
        expect(resumeAt).toBeLessThanOrEqual(after + limit.resetsInMs + margin + 1000)
        expect(requests(server).length).toBeGreaterThanOrEqual(1)
        // The agent's retries are stopped with it: nothing of it is left running.
        expect(await remaining(() => processesIn(root))).toEqual([])
      }))
  }

  const permission = agent.permission
  if ("script" in permission) {
    const allowed = permission.allowed === undefined ? "" : "; with it the write happens"
    it(`without --allow-all a write needing permission does not happen and spool says so${allowed}`, () =>
      withAgent(agent, permission.script, async (server, root, env) => {
        const denied: SpoolResult = await spool(ralph(agent, "x", "--max-iterations", "1"), { cwd: root, env })
        expect(denied.code, denied.stderr).toBe(3)
        expect(existsSync(join(root, "denied.txt"))).toBe(false)
        expect(denied.stderr).toMatch(/warning: .*--allow-all/)
        expect((await statusJson(root)).history[0].warnings.join(" ")).toContain("--allow-all")
        permission.check(denied, server)
        if (permission.allowed !== undefined) {
          const allowed = await spool(ralph(agent, "x", "--max-iterations", "1", "--allow-all"), { cwd: root, env })
          expect(allowed.code, allowed.stderr).toBe(0)
          expect(readFileSync(join(root, permission.allowed.file), "utf8")).toBe(permission.allowed.content)
        }
      }, permission.env))
  }
}
