import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ChangeId, type IterationRecord, type LoopState } from "../src/domain/Domain.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { loopSummary } from "../src/status/LoopSummary.js"
import { liveChanges, loadAllStatus, loadStatus, StatusJson, statusJson, withLiveness } from "../src/status/StatusReport.js"
import { LoopLock } from "../src/state/LoopLock.js"
import { Workspace } from "../src/state/Workspace.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"

const changeId = ChangeId.make("001-01_x")

const setup = () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "spool-status-"))
  fs.mkdirSync(path.join(root, ".spool/changes/001-01_x"), { recursive: true })
  const layer = HistoryStore.layer.pipe(Layer.provideMerge(Workspace.layer(root)), Layer.provideMerge(NodeContext.layer))
  return { root, layer }
}

const record = (iteration: number, usage: IterationRecord["usage"] = null) => iterationRecord({ iteration, usage })

const usage = (inputTokens: number, cost: number | null) =>
  ({ inputTokens, outputTokens: 5, reasoningTokens: 1, cacheReadTokens: 100, cacheWriteTokens: 100, cost })

const state: LoopState = {
  changeId: "001-01_x",
  run: "r1",
  status: "running",
  iteration: 12,
  minIterations: 1,
  maxIterations: 20,
  startedAt: "2026-11-22T00:00:00.000Z",
  updatedAt: "2026-11-22T00:00:01.000Z",
  pid: 1,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  guards: null
}

const tasks = (root: string, text: string) => fs.writeFileSync(path.join(root, ".spool/changes/001-01_x/tasks.md"), text)

describe("a change's status", () => {
  it.effect("before any loop: status none, no usage, the tasks counted, every key present", () => {
    const { root, layer } = setup()
    tasks(root, "- [x] 1.1 one\n- [ ] 1.2 two\n- [-] 1.3 three\n")
    return Effect.gen(function*() {
      const json = statusJson(yield* loadStatus(changeId))
      assert.deepStrictEqual(json, {
        changeId: "001-01_x",
        run: null,
        iteration: 0,
        status: "none",
        abandoned: false,
        branch: null,
        worktree: null,
        minIterations: null,
        maxIterations: null,
        startedAt: null,
        updatedAt: null,
        stopReason: null,
        stopMessage: null,
        resumeAt: null,
        guards: null,
        agent: null,
        agents: [],
        settings: null,
        sandbox: null,
        merge: null,
        approval: null,
        usage: null,
        reviewUsage: null,
        tasks: { total: 3, complete: 1, shelved: 1 },
        notifyFailures: [],
        history: []
      })
      // The order of the keys is the JSON's order.
      assert.deepStrictEqual(Object.keys(json), Object.keys(StatusJson.fields))
    }).pipe(Effect.provide(layer))
  })

  it.effect("reads the state and the last ten iterations, totals their usage and gives each its checks", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.writeState(changeId, state)
      for (let i = 1; i <= 12; i++) yield* store.append(changeId, record(i, i === 12 ? usage(10, null) : i === 11 ? usage(20, 0.5) : null))
      const report = yield* loadStatus(changeId)
      assert.deepStrictEqual(report.history.map((r) => r.iteration), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
      assert.strictEqual(report.skipped, 0)
      const json = statusJson(report)
      assert.deepInclude(json, { run: "r1", iteration: 12, status: "running", maxIterations: 20, usage: { tokens: 42, cost: 0.5 } })
      assert.deepStrictEqual(json.history[0]!.verify, [])
      assert.deepStrictEqual(Object.keys(json.history[0]!), [...Object.keys(record(1)), "verify", "reviews"])
      // The object is what the schema says it is.
      assert.deepStrictEqual(Schema.decodeUnknownSync(StatusJson)(JSON.parse(JSON.stringify(json))), json)
    }).pipe(Effect.provide(layer))
  })

  it.effect("keeps a sandboxed iteration's word and the run's walls in the JSON, and says nothing of walls a run had not", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      const walls = { runtime: "bubblewrap", hosts: ["api.anthropic.com"], denyRead: [], passEnv: [] }
      yield* store.writeState(changeId, { ...state, sandbox: walls })
      yield* store.append(changeId, iterationRecord({ iteration: 1, sandboxed: true }))
      yield* store.append(changeId, record(2))
      const json = statusJson(yield* loadStatus(changeId))
      assert.deepStrictEqual(json.sandbox, walls)
      assert.deepStrictEqual(json.history.map((r) => r.sandboxed), [true, undefined])
      assert.deepStrictEqual(Schema.decodeUnknownSync(StatusJson)(JSON.parse(JSON.stringify(json))), json)
    }).pipe(Effect.provide(layer))
  })

  it.effect("gives the agent of the last iteration and each agent's spend as the state has them, and the agent of each iteration", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      const agents = [
        { agent: "claude", harness: "claude", model: null, iterations: 1, costUsd: 0.5, tokens: 900, limitedUntil: "2026-11-22T05:00:00.000Z" },
        { agent: "codex:gpt-5.5", harness: "codex", model: "gpt-5.5", iterations: 1, costUsd: null, tokens: 0, limitedUntil: null }
      ]
      yield* store.writeState(changeId, { ...state, agent: "codex:gpt-5.5", agents })
      yield* store.append(changeId, iterationRecord({ iteration: 1, outcome: "limited", agent: "claude", harness: "claude", model: null }))
      yield* store.append(changeId, iterationRecord({ iteration: 2, agent: "codex:gpt-5.5", harness: "codex", model: "gpt-5.5" }))
      yield* store.append(changeId, record(3))
      const json = statusJson(yield* loadStatus(changeId))
      assert.deepInclude(json, { agent: "codex:gpt-5.5", agents })
      assert.deepStrictEqual(json.history.map((r) => [r.agent, r.harness, r.model]), [["claude", "claude", null], ["codex:gpt-5.5", "codex", "gpt-5.5"], [undefined, undefined, undefined]])
      assert.deepStrictEqual(Schema.decodeUnknownSync(StatusJson)(JSON.parse(JSON.stringify(json))), json)
    }).pipe(Effect.provide(layer))
  })

  it.effect("says what became of a run's merge, when a --merge sweep completed it", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.writeState(changeId, { ...state, status: "complete", merge: { merged: false, text: "not merged: conflict in shared.txt" } })
      const json = statusJson(yield* loadStatus(changeId))
      assert.deepInclude(json, { status: "complete", merge: { merged: false, text: "not merged: conflict in shared.txt" } })
      assert.deepStrictEqual(Schema.decodeUnknownSync(StatusJson)(JSON.parse(JSON.stringify(json))), json)
    }).pipe(Effect.provide(layer))
  })

  it.effect("reads the tasks a worktree loop ticks in its worktree, and the main copy when the worktree has none", () => {
    const { root, layer } = setup()
    tasks(root, "- [ ] 1.1 one\n- [ ] 1.2 two\n")
    const worktree = fs.mkdtempSync(path.join(os.tmpdir(), "spool-status-wt-"))
    fs.mkdirSync(path.join(worktree, ".spool/changes/001-01_x"), { recursive: true })
    fs.writeFileSync(path.join(worktree, ".spool/changes/001-01_x/tasks.md"), "- [x] 1.1 one\n- [x] 1.2 two\n")
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.writeState(changeId, { ...state, worktree })
      assert.deepStrictEqual(statusJson(yield* loadStatus(changeId)).tasks, { total: 2, complete: 2, shelved: 0 })
      yield* store.writeState(changeId, { ...state, worktree: path.join(worktree, "gone") })
      assert.deepStrictEqual(statusJson(yield* loadStatus(changeId)).tasks, { total: 2, complete: 0, shelved: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("reads an older record of a claim the checks rejected as one written now: not detected, its promise not accepted", () => {
    const { root, layer } = setup()
    // As history.jsonl held it before: the claim detected and accepted, only its checks saying otherwise.
    const older = '{"run":"r0","iteration":1,"startedAt":"2026-11-01T10:00:00.000Z","durationMs":72000,"exitCode":0,"signal":null,' +
      '"completionDetected":true,"promises":[{"accepted":true,"reason":"alone on its line","text":"<promise>COMPLETE</promise>"}],' +
      '"outcome":"failed","git":null,"commit":null,"usage":null,"error":null,"warnings":[],' +
      '"verify":[{"command":"pnpm test","exitCode":1,"signal":null,"timedOut":false,"durationMs":4213,"passed":false}]}\n'
    fs.mkdirSync(path.join(root, ".spool/.state/ralph/001-01_x"), { recursive: true })
    fs.writeFileSync(path.join(root, ".spool/.state/ralph/001-01_x/history.jsonl"), older)
    return Effect.gen(function*() {
      const [record] = statusJson(yield* loadStatus(changeId)).history
      assert.deepInclude(record!, { completionDetected: false, outcome: "failed" })
      assert.deepStrictEqual(record!.promises, [{ accepted: false, reason: "verify failed: pnpm test (exit 1)", text: "<promise>COMPLETE</promise>" }])
      assert.deepStrictEqual(record!.verify.map((c) => [c.command, c.passed]), [["pnpm test", false]])
    }).pipe(Effect.provide(layer))
  })

  it.effect("lists the changes a loop has run on, in id order, leaving out those with only context", () => {
    const { root, layer } = setup()
    const other = ChangeId.make("001-00_first")
    const contextOnly = ChangeId.make("001-02_context")
    fs.mkdirSync(path.join(root, ".spool/.state/ralph", contextOnly), { recursive: true })
    fs.writeFileSync(path.join(root, ".spool/.state/ralph", contextOnly, "context.txt"), "be brief\n")
    return Effect.gen(function*() {
      assert.deepStrictEqual(yield* loadAllStatus, [])
      const store = yield* HistoryStore
      yield* store.writeState(changeId, state)
      // A history without a state (its file removed) is a loop that ran.
      yield* store.append(other, record(1))
      assert.deepStrictEqual((yield* loadAllStatus).map((report) => report.changeId), [other, changeId])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a loop its state says runs, whose lock no live process holds, is abandoned; one that ended never is", () => {
    const { layer } = setup()
    // This process is pid 42; any other pid has ended.
    const locks = LoopLock.layer({ pid: 42, host: "here", isAlive: (pid) => pid === 42 })
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      const seen = (live: ReadonlySet<string> | null) =>
        Effect.map(loadStatus(changeId), (report) => {
          const marked = withLiveness(report, live)
          return [marked.abandoned, loopSummary(marked).shownStatus, statusJson(marked).abandoned] as const
        })
      // No lock to read (a remote's states): nothing is said of it.
      assert.isNull(yield* liveChanges.pipe(Effect.provide(Layer.empty)))
      yield* store.writeState(changeId, state)
      assert.deepStrictEqual(yield* seen(null), [undefined, "running", false])
      // Killed: its state says running, and no lock is held.
      const none = yield* liveChanges.pipe(Effect.provide(locks))
      assert.deepStrictEqual(yield* seen(none), [true, "abandoned", true])
      yield* store.writeState(changeId, { ...state, status: "waiting", resumeAt: "2026-11-22T05:00:00.000Z" })
      assert.deepStrictEqual(yield* seen(none), [true, "abandoned", true])
      // Held by a live process: it runs.
      yield* Effect.scoped(Effect.gen(function*() {
        const lock = yield* LoopLock
        assert.isTrue(Option.isNone(yield* lock.acquire(changeId)))
        const held = yield* liveChanges
        assert.deepStrictEqual(yield* seen(held), [false, "waiting", false])
      })).pipe(Effect.provide(locks))
      // Ended: whether a process holds it or not, the state is the truth.
      yield* store.writeState(changeId, { ...state, status: "max-iterations", stopReason: "max-iterations", stopMessage: "stopped" })
      assert.deepStrictEqual(yield* seen(none), [false, "max-iterations", false])
    }).pipe(Effect.provide(layer))
  })
})
