import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { loopOptions } from "@spool/testkit/loopOptions"
import { Effect, Layer } from "effect"
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Application, Invocation, Lists, noNotices, Reports, type RunRequest, Runs, Sweeps } from "../src/index.js"
import { finishingAgent, git, repository } from "./repository.js"

// The application's services on layers of the test's own, with no module of the CLI: a captured
// report, an invocation of the test's own, real git, real agent processes.

const options = loopOptions({ maxIterations: 3, requireTasks: true, maxLimitWaitMs: 0 })

const request = (change: string, agent: string, overrides: Partial<RunRequest> = {}): RunRequest => ({
  change,
  prompt: "",
  options,
  agent: { harness: "command", harnessCommand: agent, model: null, allowAll: false },
  fallback: [],
  rotate: false,
  review: [],
  maxReviews: 3,
  worktree: false,
  resume: false,
  remote: null,
  deadline: null,
  notices: noNotices,
  sandbox: null,
  settings: { file: null, fromFile: [], fromCommandLine: [] },
  ...overrides
})

/** Runs `effect` on the application at `root`; what it reported, line by line, beside its result or failure. */
const onApplication = <A, E>(root: string, effect: Effect.Effect<A, E, Runs | Sweeps | Lists>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const result = yield* Effect.either(effect.pipe(
      Effect.provide(Application.layer({ cwd: root, layout: null })),
      Effect.provide(Layer.mergeAll(
        Reports.lines((line) => lines.push(line)),
        Layer.succeed(Invocation, { cwd: root, env: { PATH: process.env.PATH }, pid: process.pid, stdinIsTTY: false, isRoot: false })
      )),
      Effect.provide(NodeContext.layer)
    ))
    return { result, lines }
  })

const stateOf = (root: string, id: string) => JSON.parse(readFileSync(join(root, ".spool", ".state", "ralph", id, "state.json"), "utf8"))

describe("Runs, Sweeps and Lists: the application below the CLI", () => {
  it.live("Runs.run takes a change by its prefix and runs its loop to completion, committing the agent's work", () =>
    Effect.gen(function*() {
      const root = repository(["001-01_hello"])
      const { result, lines } = yield* onApplication(root, Effect.flatMap(Runs, (runs) => runs.run(request("001-01", finishingAgent()))))
      expect(result._tag === "Right" ? result.right.status : result, lines.join("\n")).toBe("complete")
      expect(lines).toContain("[001-01_hello] complete: the promise was accepted at iteration 1")
      expect(git(root, "log", "--format=%s", "-1")).toBe("spool ralph: 001-01_hello iteration 1")
      expect(stateOf(root, "001-01_hello").status).toBe("complete")
    }))

  it.live("Runs.run refuses a request it cannot do before anything is written: an unknown agent, a remote the repository lacks", () =>
    Effect.gen(function*() {
      const root = repository(["001-01_hello"])
      const unknown = yield* onApplication(root, Effect.flatMap(Runs, (runs) =>
        runs.run(request("001-01", "x", { agent: { harness: "nope", harnessCommand: null, model: null, allowAll: false } }))))
      expect(unknown.result._tag === "Left" && unknown.result.left).toMatchObject({
        _tag: "RequestError",
        message: "unknown harness 'nope'; known harnesses: opencode, claude, codex, gemini, pi, copilot, qwen, command"
      })
      const remote = yield* onApplication(root, Effect.flatMap(Runs, (runs) =>
        runs.run(request("001-01", finishingAgent(), { remote: { name: "upstream", leaseTtlMs: 900_000 } }))))
      expect(remote.result._tag === "Left" && remote.result.left).toMatchObject({
        _tag: "RequestError",
        message: "--remote upstream: the repository has no remote of that name; add it with git remote add upstream <url>"
      })
      expect(git(root, "status", "--porcelain")).toBe("")
      expect(git(root, "log", "--format=%s")).toBe("initial")
    }))

  it.live("Runs.run wraps the checked loop in what the caller gives, and only a checked one", () =>
    Effect.gen(function*() {
      const root = repository(["001-01_hello"])
      const wrapped: Array<string> = []
      const around = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.acquireUseRelease(Effect.sync(() => wrapped.push("start")), () => effect, () => Effect.sync(() => wrapped.push("end")))
      yield* onApplication(root, Effect.flatMap(Runs, (runs) => runs.run(request("001-01", finishingAgent()), around)))
      yield* onApplication(root, Effect.flatMap(Runs, (runs) =>
        runs.run(request("001-01", "x", { agent: { harness: "nope", harnessCommand: null, model: null, allowAll: false } }), around)))
      expect(wrapped).toEqual(["start", "end"])
    }))

  it.live("Sweeps.run sweeps the named changes in order and reports each; Lists.list then says both are complete", () =>
    Effect.gen(function*() {
      const root = repository(["001-01_hello", "001-02_goodbye", "001-03_later"])
      const sweep = Effect.flatMap(Sweeps, (sweeps) =>
        sweeps.run({ ...request("", finishingAgent()), selection: { _tag: "Named", changes: ["001-02", "001-01"], moduleId: "001" }, maxParallel: 1, merge: false }))
      const { result, lines } = yield* onApplication(root, sweep)
      expect(result._tag === "Right" && result.right.rows.map((row) => [row.changeId, row.outcome]), lines.join("\n")).toEqual([
        ["001-02_goodbye", "complete"],
        ["001-01_hello", "complete"]
      ])
      expect(lines[0]).toBe("sweeping 2 ready changes: 001-02_goodbye, 001-01_hello")
      expect(lines).toContain("=== sweep: 001-02_goodbye (1 of 2) ===")
      const listed = yield* onApplication(root, Effect.flatMap(Lists, (lists) => lists.list({ remote: null })))
      expect(listed.result._tag === "Right" && listed.result.right.map((change) => [change.id, change.state])).toEqual([
        ["001-01_hello", "complete"],
        ["001-02_goodbye", "complete"],
        ["001-03_later", "ready"]
      ])
    }))

  it.live("a sweep with a reviewer gives each change's reviews, and the summary the reviews over the sweep apart from the agents' spend", () =>
    Effect.gen(function*() {
      const root = repository(["001-01_hello", "001-02_goodbye"])
      const script = join(mkdtempSync(join(tmpdir(), "spool-app-reviewer-")), "reviewer.mjs")
      writeFileSync(script, `console.log("Every task is done.\\n<verdict>approve</verdict>")\n`)
      const { result, lines } = yield* onApplication(root, Effect.flatMap(Sweeps, (sweeps) =>
        sweeps.run({ ...request("", finishingAgent(), { review: [`command:${process.execPath} ${script}`] }), selection: { _tag: "AllReady" }, maxParallel: 1, merge: false })))
      expect(result._tag === "Right" && result.right.rows.map((row) => [row.outcome, row.reviews]), lines.join("\n")).toEqual([
        ["complete", { reviews: 1, approved: 1, costUsd: null, tokens: null }],
        ["complete", { reviews: 1, approved: 1, costUsd: null, tokens: null }]
      ])
      expect(lines.at(-1)!.split("\n").slice(-2)).toEqual(["total: 2 iterations", "reviews: 2 (2 approved), cost unknown"])
    }))

  it.live("a sweep with --allow-all and no sandbox says once that its agents have the person's rights, naming --sandbox", () =>
    Effect.gen(function*() {
      const root = repository(["001-01_hello"])
      const allowAll = { harness: "command", harnessCommand: finishingAgent(), model: null, allowAll: true }
      const { result, lines } = yield* onApplication(root, Effect.flatMap(Sweeps, (sweeps) =>
        sweeps.run({ ...request("", finishingAgent(), { agent: allowAll }), selection: { _tag: "AllReady" }, maxParallel: 1, merge: false })))
      expect(result._tag, lines.join("\n")).toBe("Right")
      expect(lines.filter((line) => line.includes("--sandbox"))).toEqual([
        "warning: this sweep runs its agents with --allow-all and your rights: every file you can read, every host you can reach; --sandbox walls each one in"
      ])
      expect(lines[0]).toContain("warning: this sweep")
    }))

  it.live("with --sandbox, the checks of a merged tree run behind the walls too: one that writes outside its tree fails there, and nothing is merged", () =>
    Effect.gen(function*() {
      const root = repository(["001-01_hello"])
      const outside = realpathSync(mkdtempSync(join(tmpdir(), "spool-app-outside-")))
      // Passes in the loop; on the merged tree (SPOOL_MERGE=1) it writes outside the tree, and fails if it cannot.
      const check = `if [ "$SPOOL_MERGE" = 1 ]; then echo escaped > ${outside}/escaped.txt || exit 1; fi`
      const { result, lines } = yield* onApplication(root, Effect.flatMap(Sweeps, (sweeps) =>
        sweeps.run({
          ...request("", finishingAgent(), { options: { ...options, verify: [check] }, sandbox: { allowHosts: [], denyRead: [], passEnv: [] } }),
          selection: { _tag: "AllReady" },
          maxParallel: 1,
          merge: true
        })))
      expect(result._tag === "Right" && result.right.rows.map((row) => row.outcome), lines.join("\n")).toEqual(["complete"])
      expect(lines.some((line) => line.startsWith("001-01_hello: not merged:") && line.includes("failed on the merged tree")), lines.join("\n")).toBe(true)
      expect(existsSync(join(outside, "escaped.txt"))).toBe(false)
      expect(existsSync(join(root, "001-01_hello.txt"))).toBe(false)
    }))

  it.live("Sweeps.run refuses a named change of another module, and several loops at once outside git, before any loop runs", () =>
    Effect.gen(function*() {
      const root = repository(["001-01_hello"])
      const outside = yield* onApplication(root, Effect.flatMap(Sweeps, (sweeps) =>
        sweeps.run({ ...request("", finishingAgent()), selection: { _tag: "Named", changes: ["001-01"], moduleId: "002" }, maxParallel: 1, merge: false })))
      expect(outside.result._tag === "Left" && outside.result.left.message).toBe(
        "change 001-01_hello belongs to module 001, not 002; drop --module or that --change"
      )
      expect(outside.lines).toEqual([])
      const plain = realpathSync(mkdtempSync(join(tmpdir(), "spool-app-plain-")))
      cpSync(join(root, ".spool"), join(plain, ".spool"), { recursive: true })
      const side = yield* onApplication(plain, Effect.flatMap(Sweeps, (sweeps) =>
        sweeps.run({ ...request("", finishingAgent()), selection: { _tag: "AllReady" }, maxParallel: 2, merge: false })))
      expect(side.result._tag === "Left" && side.result.left.message).toBe(
        `--max-parallel 2 runs each loop in a git worktree of its own, and ${plain} is not inside a git repository; run git init and commit, or sweep one change at a time (--max-parallel 1)`
      )
      expect(existsSync(join(plain, ".spool", ".state"))).toBe(false)
    }))
})
