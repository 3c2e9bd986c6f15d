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
import {
  CODEX_BIN,
  codexEnv,
  type FakeResponsesServer,
  startFakeResponsesServer,
  TEST_MODEL,
  type Turn,
  Turn as T
} from "@spool/testkit/fakeResponsesServer"
import { newClone, startGitDaemon } from "@spool/testkit/gitDaemon"
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PROMISE } from "./agents/agent.js"
import { agentScript, makeWorkspace, repositoryOf, spool, stateDir } from "./support.js"

// Fallback agents through the built binary: the real claude, signed in to a subscription, meets
// its usage limit at its fake server, and the loop goes on at once with the real codex or a command.
// Where an order matters, a fake server holds its answer until the loop has got there: no clock races.

const CHANGE = "001-01_greeting-cli"
/** The agents as records and limits name them: the harness, with the model asked for. */
const CLAUDE = "claude:claude-test-model"
const CODEX = `codex:${TEST_MODEL}`
const claudeFirst = ["--harness", "claude", "--model", "claude-test-model", "--allow-all", "--no-interactive"]

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** Epoch seconds, `seconds` from now. */
const secondsAhead = (seconds: number) => Math.floor(Date.now() / 1000) + seconds
/** A time as the loop prints it: `2026-11-23T15:01:00Z`. */
const clock = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z")
const iso = (ms: number) => new Date(ms).toISOString()

/** Resolves once `ready` holds, polled; fails after two minutes. */
const until = async (ready: () => boolean, what: string) => {
  for (let i = 0; i < 2400 && !ready(); i++) await sleep(50)
  if (!ready()) throw new Error(`never came: ${what}`)
}

/** Answers each run of claude (its first request) with the next of `runs`, the last for any after. */
const byRun = (...runs: ReadonlyArray<Script>): Script => {
  let run = -1
  return (conversation) => {
    if (conversation.turn === 0) run++
    return runs[Math.min(run, runs.length - 1)]!(conversation)
  }
}

const statusJson = async (root: string, changeId = CHANGE) =>
  JSON.parse((await spool(["ralph", "--status", "--json", "--change", changeId], { cwd: root })).stdout)

/** The model requests claude made. */
const asked = (server: FakeAnthropicServer) => server.requests.filter((r) => r.path.startsWith("/v1/messages?")).length

/** Each record of a status: iteration, agent, harness, model, outcome. */
const records = (status: { history: ReadonlyArray<Record<string, unknown>> }) =>
  status.history.map((r) => [r.iteration, r.agent, r.harness, r.model, r.outcome])

/** Each agent of a status's list: agent, iterations, limitedUntil. */
const agentNotes = (status: { agents: ReadonlyArray<Record<string, unknown>> }) =>
  status.agents.map((note) => [note.agent, note.iterations, note.limitedUntil])

/**
 * A `command` agent (its `--fallback`, `command:node <script>`): writes
 * `work/<change>-<iteration>.txt`, and claims completion from iteration `doneFrom` on. `ran` says
 * whether it has run that iteration of that change.
 */
const commandAgent = (doneFrom: number) => {
  const marks = realpathSync(mkdtempSync(join(tmpdir(), "spool-marks-")))
  const script = agentScript(`
import { mkdirSync, writeFileSync } from "node:fs"
const it = Number(process.env.SPOOL_ITERATION)
const name = process.env.SPOOL_CHANGE + "-" + it
mkdirSync("work", { recursive: true })
writeFileSync("work/" + name + ".txt", "iteration " + it + "\\n")
console.log("the command ran " + name)
if (it >= ${doneFrom}) console.log("<promise>COMPLETE</promise>")
writeFileSync(${JSON.stringify(marks)} + "/" + name, "")
`)
  return { fallback: `command:${script}`, ran: (changeId: string, iteration: number) => existsSync(join(marks, `${changeId}-${iteration}`)) }
}

/** The time until which the change's state holds `agent` by a usage limit, if it does. */
const heldUntil = (root: string, agent: string): number | null => {
  try {
    const state = JSON.parse(readFileSync(join(stateDir(root, CHANGE), "state.json"), "utf8"))
    const until = state.agents?.find((note: { agent: string }) => note.agent === agent)?.limitedUntil
    return typeof until === "string" ? Date.parse(until) : null
  } catch {
    // No state yet, or one being written.
    return null
  }
}

interface Agents {
  readonly claude: FakeAnthropicServer
  readonly codex: FakeResponsesServer
  /** Both agents pointed at their servers, claude signed in to a subscription. */
  readonly env: Record<string, string>
}

/** Runs `body` in `root` (a fresh workspace by default) with claude's fake server answering `claude`, codex's `codex`. */
const withAgents = async <A>(
  scripts: { readonly claude: Script; readonly codex?: ReadonlyArray<Turn> },
  body: (agents: Agents, root: string) => Promise<A>,
  root: string = makeWorkspace()
): Promise<A> => {
  const home = `${root}-agents`
  const claude = await startFakeAnthropicServer(scripts.claude)
  const codex = await startFakeResponsesServer(scripts.codex ?? [])
  try {
    const env = {
      ...codexEnv({ baseURL: codex.baseURL, root: join(home, "codex") }),
      // claude's HOME over codex's: codex keeps its own in CODEX_HOME.
      ...claudeEnv({ baseURL: claude.baseURL, root: join(home, "claude"), subscription: true }),
      SPOOL_CLAUDE_BIN: CLAUDE_BIN,
      SPOOL_CODEX_BIN: CODEX_BIN
    }
    return await body({ claude, codex, env }, root)
  } finally {
    await Promise.all([claude.close(), codex.close()])
    rmSync(home, { recursive: true, force: true })
  }
}

describe("spool ralph --fallback (the built binary, the real claude and codex)", () => {
  it("goes on with codex at once when claude meets its usage limit, and back to claude once its reset has passed", () => {
    let resetsAt = 0
    let held = 0
    let root = ""
    return withAgents({
      claude: byRun(
        // Far enough ahead that the loop notes the limit before it lifts, however busy the machine.
        () => Reply.usageLimit((resetsAt = secondsAhead(20))),
        byTurn(Reply.write("greeting.txt", "hello from claude\n"), Reply.text("The file is written.\n\n", PROMISE))
      ),
      // codex answers once claude's hold has passed, so that the next iteration finds claude free.
      codex: [
        T.after(async () => {
          await until(() => (held = heldUntil(root, CLAUDE) ?? 0) > 0 && Date.now() > held, "claude's hold to pass")
        }, T.text("Looked around; more to do.\n"))
      ]
    }, async ({ claude, codex, env }, workspace) => {
      root = workspace
      const result = await spool(["ralph", "Write greeting.txt.", "--change", "001-01", ...claudeFirst, "--fallback", CODEX, "--max-iterations", "3"], { cwd: root, env })
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(0)
      // claude's reset, to the second, from the headers of the refused request.
      expect(held).toBe(resetsAt * 1000)
      const switched = result.stdout.indexOf(`switching to ${CODEX}: ${CLAUDE} is held by its usage limit until ${clock(resetsAt * 1000)}\n`)
      expect(switched).toBeGreaterThan(-1)
      expect(result.stdout.indexOf(`back to ${CLAUDE}: its usage limit has lifted\n`)).toBeGreaterThan(switched)
      expect(result.stdout).not.toContain("waiting for")
      expect(result.stdout).toContain("complete: the promise was accepted at iteration 2")
      expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe("hello from claude\n")

      const status = await statusJson(root)
      expect(records(status)).toEqual([
        [1, CLAUDE, "claude", "claude-test-model", "limited"],
        [1, CODEX, "codex", TEST_MODEL, "continue"],
        [2, CLAUDE, "claude", "claude-test-model", "complete"]
      ])
      expect(status.history[0].error).toMatch(/^You've hit your 5-hour limit · resets \d/)
      expect(status).toMatchObject({ status: "complete", agent: CLAUDE })
      // claude: the refused request (no tokens), then two of the fake's (240 tokens); codex: one (90 tokens, no cost).
      expect(status.agents).toEqual([
        { agent: CLAUDE, harness: "claude", model: "claude-test-model", iterations: 2, costUsd: status.history[2].usage.cost, tokens: 240, limitedUntil: null },
        { agent: CODEX, harness: "codex", model: TEST_MODEL, iterations: 1, costUsd: null, tokens: 90, limitedUntil: null }
      ])
      expect(status.history[2].usage.cost).toBeGreaterThan(0)
      expect(asked(claude)).toBe(3)
      expect(codex.requests.map((r) => r.model)).toEqual([TEST_MODEL])
    })
  })

  it("waits when every agent is limited, until the first is free (its reset plus a minute), and goes on with it", () => {
    let claudeReset = 0
    return withAgents({
      claude: byRun(
        // Far enough ahead that the loop, once claude has exited, still finds it held, however busy the machine.
        () => Reply.usageLimit((claudeReset = secondsAhead(10))),
        byTurn(Reply.write("greeting.txt", "hello from claude\n"), Reply.text("The file is written.\n\n", PROMISE))
      ),
      codex: [T.usageLimit(secondsAhead(3 * 3600))]
    }, async ({ claude, codex, env }, root) => {
      const codexFirst = ["--harness", "codex", "--model", TEST_MODEL, "--allow-all", "--no-interactive", "--fallback", CLAUDE]
      const result = await spool(["ralph", "Write greeting.txt.", "--change", "001-01", ...codexFirst, "--max-limit-wait", "10m"], { cwd: root, env })
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(0)
      const resumeAt = (claudeReset + 60) * 1000
      expect(result.stdout).toContain(`waiting for every agent's usage limit until ${clock(resumeAt)}, when ${CLAUDE} is free (reset time); Ctrl-C stops the loop\n`)
      expect(result.stdout).toContain("complete: the promise was accepted at iteration 1")
      const status = await statusJson(root)
      expect(records(status)).toEqual([
        [1, CODEX, "codex", TEST_MODEL, "limited"],
        [1, CLAUDE, "claude", "claude-test-model", "limited"],
        [1, CLAUDE, "claude", "claude-test-model", "complete"]
      ])
      // The claude that ran again started once the wait was over.
      expect(Date.parse(status.history[2].startedAt)).toBeGreaterThanOrEqual(resumeAt)
      expect(readFileSync(join(root, "greeting.txt"), "utf8")).toBe("hello from claude\n")
      expect(codex.requests.map((r) => r.model)).toEqual([TEST_MODEL])
      expect(asked(claude)).toBe(3)
    })
  })

  it("ends at once when claude and codex are both limited and --max-limit-wait is 0, to resume at the earlier reset plus a minute; exit 5", () => {
    let claudeReset = 0
    // codex's reset is the later, though its limit is met last: the loop would wait for claude's.
    const codexReset = secondsAhead(3 * 3600)
    return withAgents({ claude: () => Reply.usageLimit((claudeReset = secondsAhead(2 * 3600))), codex: [T.usageLimit(codexReset)] }, async ({ env }, root) => {
      const result = await spool(["ralph", "x", "--change", "001-01", ...claudeFirst, "--fallback", CODEX, "--max-limit-wait", "0"], { cwd: root, env })
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(5)
      const resumeAt = (claudeReset + 60) * 1000
      expect(result.stdout).toContain(`switching to ${CODEX}: ${CLAUDE} is held by its usage limit until ${clock(claudeReset * 1000)}\n`)
      expect(result.stdout).toMatch(
        new RegExp(`^stopped: the limit lifts at ${clock(resumeAt)}, past --max-limit-wait is 0 \\(You've hit your 5-hour limit · resets .+\\); run spool again after ${clock(resumeAt)}$`, "m")
      )
      expect(result.stdout).not.toContain("waiting for")
      const status = await statusJson(root)
      expect(status).toMatchObject({ status: "usage-limit", stopReason: "usage-limit", resumeAt: iso(resumeAt) })
      expect(records(status)).toEqual([
        [1, CLAUDE, "claude", "claude-test-model", "limited"],
        [1, CODEX, "codex", TEST_MODEL, "limited"]
      ])
      // codex gives its reset in its own words, to the minute.
      expect(status.history[1].error).toMatch(/^You’ve hit your usage limit\. .* try again at \d{1,2}:\d\d [AP]M\.$/)
      expect(agentNotes(status)).toEqual([[CLAUDE, 1, iso(claudeReset * 1000)], [CODEX, 1, iso(Math.floor(codexReset / 60) * 60_000)]])
    })
  })

  it("in a sweep with --max-parallel 2 and --worktree, a limit one loop meets moves the other loop off claude before its next iteration", () => {
    const root = repositoryOf({ "001-01_alpha": {}, "001-02_beta": {} })
    const command = commandAgent(1)
    let resetsAt = 0
    const runs: Array<string> = []
    return withAgents({
      claude: (conversation) => {
        const changeId = conversation.cwd?.split("/").at(-1) ?? "?"
        if (conversation.turn === 0) runs.push(changeId)
        // alpha meets the limit once beta's claude is at work too; beta's ends once alpha has gone on with the command.
        return changeId === "001-01_alpha"
          ? Reply.after(() => until(() => runs.includes("001-02_beta"), "beta's claude"), Reply.usageLimit((resetsAt = secondsAhead(3600))))
          : Reply.after(() => until(() => command.ran("001-01_alpha", 1), "alpha's command"), Reply.text("Looked around; more to do.\n"))
      }
    }, async ({ env }) => {
      const result = await spool(["ralph", "x", "--continue-ready", "--max-parallel", "2", "--worktree", ...claudeFirst, "--fallback", command.fallback], { cwd: root, env })
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(0)
      // Once each: beta's second iteration did not ask claude.
      expect(runs.sort()).toEqual(["001-01_alpha", "001-02_beta"])
      for (const prefix of ["[001-01]", "[001-02]"]) {
        expect(result.stdout).toContain(`${prefix} switching to ${command.fallback}: ${CLAUDE} is held by its usage limit until ${clock(resetsAt * 1000)}\n`)
      }
      expect(result.stdout).not.toContain("waiting for")
      const alpha = await statusJson(root, "001-01_alpha")
      const beta = await statusJson(root, "001-02_beta")
      expect(records(alpha)).toEqual([[1, CLAUDE, "claude", "claude-test-model", "limited"], [1, command.fallback, "command", null, "complete"]])
      expect(records(beta)).toEqual([[1, CLAUDE, "claude", "claude-test-model", "continue"], [2, command.fallback, "command", null, "complete"]])
      // beta met no limit: it keeps the one alpha's loop met.
      expect(agentNotes(beta)).toEqual([[CLAUDE, 1, iso(resetsAt * 1000)], [command.fallback, 1, null]])
    }, root)
  })

  it("--resume --remote on another clone does not run claude while the limit the first clone met holds", async () => {
    const daemon = await startGitDaemon()
    try {
      daemon.createBare("repo", makeWorkspace())
      const clone = () => newClone(daemon.url("repo"), join(realpathSync(mkdtempSync(join(tmpdir(), "spool-clone-"))), "repo"))
      const first = clone()
      const command = commandAgent(2)
      let resetsAt = 0
      await withAgents({ claude: () => Reply.usageLimit((resetsAt = secondsAhead(3600))) }, async ({ claude, env }) => {
        const args = ["ralph", "x", "--change", "001-01", "--remote", "origin", ...claudeFirst, "--fallback", command.fallback]
        const stopped = await spool([...args, "--max-iterations", "1"], { cwd: first, env })
        expect(stopped.code, `${stopped.stderr}${stopped.stdout}`).toBe(3)
        expect(asked(claude)).toBe(1)

        const second = clone()
        const resumed = await spool([...args, "--resume", "--max-iterations", "3"], { cwd: second, env })
        expect(resumed.code, `${resumed.stderr}${resumed.stdout}`).toBe(0)
        expect(asked(claude)).toBe(1)
        expect(resumed.stdout).toContain(`the command ran ${CHANGE}-2\n`)
        const status = await statusJson(second)
        expect(records(status)).toEqual([
          [1, CLAUDE, "claude", "claude-test-model", "limited"],
          [1, command.fallback, "command", null, "continue"],
          [2, command.fallback, "command", null, "complete"]
        ])
        expect(agentNotes(status)).toEqual([[CLAUDE, 1, iso(resetsAt * 1000)], [command.fallback, 2, null]])
      }, first)
    } finally {
      await daemon.stop()
    }
  })

  it("--rotate takes claude and the command in turn, and passes claude over while its limit holds", () => {
    const command = commandAgent(4)
    let resetsAt = 0
    return withAgents({
      claude: byRun(byTurn(Reply.text("Looked around; more to do.\n")), () => Reply.usageLimit((resetsAt = secondsAhead(3600))))
    }, async ({ claude, env }, root) => {
      const result = await spool(["ralph", "x", "--change", "001-01", ...claudeFirst, "--fallback", command.fallback, "--rotate"], { cwd: root, env })
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(0)
      const status = await statusJson(root)
      expect(records(status)).toEqual([
        [1, CLAUDE, "claude", "claude-test-model", "continue"],
        [2, command.fallback, "command", null, "continue"],
        [3, CLAUDE, "claude", "claude-test-model", "limited"],
        [3, command.fallback, "command", null, "continue"],
        // claude's turn, but its limit holds.
        [4, command.fallback, "command", null, "complete"]
      ])
      expect(asked(claude)).toBe(2)
      expect(agentNotes(status)).toEqual([[CLAUDE, 2, iso(resetsAt * 1000)], [command.fallback, 3, null]])
      expect(result.stdout).not.toContain("waiting for")
      // Said once, as claude meets its limit; its turn passed over after that is not said again.
      const switched = `switching to ${command.fallback}: ${CLAUDE} is held by its usage limit until ${clock(resetsAt * 1000)}\n`
      expect(result.stdout.split(switched)).toHaveLength(2)
    })
  })
})
