import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type AgentNote, ChangeId, type IterationRecord, type LoopState } from "../src/domain/Domain.js"
import { makeRedactor } from "../src/output/Redact.js"
import { parseTasks } from "../src/prompt/Tasks.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { Workspace } from "../src/state/Workspace.js"
import {
  dashboardDetail,
  dashboardIteration,
  dashboardLoop,
  decodeTail,
  harnessOfLog,
  iterationOutput,
  journalText,
  unreadableLoop
} from "../src/status/Dashboard.js"
import { loadDashboardDetail, loadDashboardLoops } from "../src/status/DashboardSource.js"
import { loopSummary } from "../src/status/LoopSummary.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"

const changeId = ChangeId.make("001-01_x")

const note = (agent: string, harness: string, fields: Partial<AgentNote> = {}): AgentNote =>
  ({ agent, harness, model: null, iterations: 0, costUsd: null, tokens: 0, limitedUntil: null, ...fields })

const record = (iteration: number, patch: Partial<IterationRecord> = {}) => iterationRecord({ iteration, durationMs: 1000 * iteration, ...patch })

const state: LoopState = {
  changeId: "001-01_x",
  run: "r1",
  status: "running",
  iteration: 3,
  minIterations: 1,
  maxIterations: 20,
  startedAt: "2026-11-22T00:00:00.000Z",
  updatedAt: "2026-11-22T01:02:03.000Z",
  pid: 1,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  guards: null
}

const guards = {
  maxCostUsd: null, maxTokens: null, maxDurationMs: null, stallIterations: 5, maxConsecutiveFailures: 5, maxLimitWaitMs: 0,
  costUsd: 0.42, tokens: 1500, stalledIterations: 0, consecutiveFailures: 0
}

const bytes = (text: string) => new TextEncoder().encode(text)

describe("the dashboard's view of a loop", () => {
  it("gives a change's row its status, iteration of max, time, spend, tasks, last outcome, branch and last move", () => {
    const report = {
      changeId,
      state: { ...state, guards, branch: "spool/001-01_x", elapsedMs: 90_000 },
      history: [record(1), record(2, { outcome: "failed" })],
      skipped: 0,
      tasks: parseTasks("- [x] 1.1 one\n- [ ] 1.2 two\n- [-] 1.3 three\n- [x] 1.4 four\n")
    }
    assert.deepStrictEqual(dashboardLoop(loopSummary(report)), {
      changeId: "001-01_x",
      status: "running",
      iteration: 3,
      maxIterations: 20,
      elapsedMs: 90_000,
      spend: { costUsd: 0.42, tokens: 1500 },
      tasks: { complete: 2, shelved: 1, total: 4 },
      lastOutcome: "failed",
      branch: "spool/001-01_x",
      notMerged: null,
      updatedAt: "2026-11-22T01:02:03.000Z",
      problem: null
    })
    // A state written before the run's time was kept: from its start to its last write.
    assert.strictEqual(dashboardLoop(loopSummary({ ...report, state })).elapsedMs, 3_723_000)
    assert.deepInclude(dashboardLoop(loopSummary({ ...report, state: null })), { status: "none", elapsedMs: null, updatedAt: null, maxIterations: null })
    assert.deepInclude(dashboardLoop(loopSummary({ ...report, abandoned: true })), { status: "abandoned" })
    // A completed change whose work is not home says why: awaiting a person's approval, a conflict; a merged one nothing.
    const completed = { ...state, status: "complete" as const }
    assert.deepInclude(dashboardLoop(loopSummary({ ...report, state: { ...completed, merge: { merged: false, text: "awaiting approval" } } })), { notMerged: "awaiting approval" })
    assert.deepInclude(dashboardLoop(loopSummary({ ...report, state: { ...completed, merge: { merged: true, text: "merged into main (0123abcd)" } } })), { notMerged: null })
  })

  it("gives an iteration its duration, spend, files changed, commit and checks", () => {
    const check = { command: "pnpm test", exitCode: 1, signal: null, timedOut: false, durationMs: 4200, passed: false }
    const used = record(2, {
      usage: { inputTokens: 100, outputTokens: 20, reasoningTokens: 3, cacheReadTokens: 999, cacheWriteTokens: 999, cost: 0.05 },
      git: { changedFiles: 4, files: ["a", "b", "c", "d"], insertions: 10, deletions: 2 },
      commit: "0123456789abcdef",
      verify: [check],
      outcome: "failed"
    })
    assert.deepStrictEqual(dashboardIteration(used), {
      run: "r1",
      iteration: 2,
      startedAt: "2026-11-22T00:00:00.000Z",
      outcome: "failed",
      durationMs: 2000,
      exitCode: 0,
      signal: null,
      costUsd: 0.05,
      tokens: 123,
      changedFiles: 4,
      commit: "0123456789abcdef",
      checks: [check],
      error: null,
      agent: null,
      reviews: []
    })
    assert.strictEqual(dashboardIteration(record(3, { agent: "codex:gpt-5.5", harness: "codex" })).agent, "codex:gpt-5.5")
    // Unknown is not zero: no usage, no git, no checks.
    assert.deepInclude(dashboardIteration(record(1)), { costUsd: null, tokens: null, changedFiles: null, checks: [] })
  })

  it("builds a change's page from its status, its journal and its output", () => {
    const report = { changeId, state: { ...state, stopMessage: "stopped: enough" }, history: [record(1), record(2)], skipped: 0, tasks: parseTasks(null) }
    const detail = dashboardDetail(report, { journal: { text: "j", truncated: true }, output: { text: "o", truncated: false, run: "r1", iteration: 3 } })
    assert.deepInclude(detail, { run: "r1", stopMessage: "stopped: enough", journal: { text: "j", truncated: true } })
    assert.deepStrictEqual(detail.iterations.map((i) => i.iteration), [1, 2])
    assert.deepStrictEqual(detail.output, { text: "o", truncated: false, run: "r1", iteration: 3 })
  })

  it("gives a change's page the agent of the last iteration and each agent's spend, as the state has them", () => {
    const agents = [note("claude", "claude", { iterations: 2, costUsd: 0.4 }), note("codex:gpt-5.5", "codex", { iterations: 1, tokens: 700 })]
    const files = { journal: { text: "", truncated: false }, output: null }
    const report = { changeId, state: { ...state, agent: "codex:gpt-5.5", agents }, history: [], skipped: 0, tasks: parseTasks(null) }
    assert.deepInclude(dashboardDetail(report, files), { agent: "codex:gpt-5.5", agents })
    assert.deepInclude(dashboardDetail({ ...report, state }, files), { agent: null, agents: [] })
  })

  it("gives each iteration its reviews, and the page the current run's reviews with the reviewers' spend apart", () => {
    const used = (inputTokens: number, cost: number | null) =>
      ({ inputTokens, outputTokens: 10, reasoningTokens: 0, cacheReadTokens: 500, cacheWriteTokens: 0, cost })
    const changes = { reviewer: "claude", verdict: "changes" as const, findings: "add a test for the parser", durationMs: 4000, usage: used(90, 0.2) }
    const approve = { reviewer: "codex:gpt-5.5", verdict: "approve" as const, findings: null, durationMs: 3000, usage: null }
    const history = [
      record(1, { run: "r0", outcome: "changes", reviews: [changes] }),
      record(1, { outcome: "changes", reviews: [changes] }),
      record(2, { outcome: "complete", usage: used(5000, 1), reviews: [{ ...changes, verdict: "approve", findings: null, usage: used(40, 0.1) }, approve] })
    ]
    assert.deepStrictEqual(dashboardIteration(history[1]!).reviews, [
      { reviewer: "claude", verdict: "changes", findings: "add a test for the parser", durationMs: 4000, costUsd: 0.2, tokens: 100 }
    ])
    assert.deepStrictEqual(dashboardIteration(history[2]!).reviews.map((review) => [review.verdict, review.costUsd, review.tokens]), [["approve", 0.1, 50], ["approve", null, null]])
    const files = { journal: { text: "", truncated: false }, output: null }
    const detail = dashboardDetail({ changeId, state, history, tasks: parseTasks(null) }, files)
    // Of the current run (r1) only: the earlier run's review is listed with its iteration, not counted.
    assert.deepInclude(detail.reviews, { reviews: 3, approved: 2, tokens: 150 })
    assert.closeTo(detail.reviews!.costUsd!, 0.3, 1e-9)
    assert.isNull(dashboardDetail({ changeId, state, history: [record(1)], tasks: parseTasks(null) }, files).reviews)
  })

  it("reads an iteration's log with the harness that ran it: its record's, else the running agent's, else the run's", () => {
    const agents = [note("claude", "claude"), note("codex:gpt-5.5", "codex")]
    const several = { ...state, harness: "claude", agent: "codex:gpt-5.5", agents }
    // Iteration 3 is recorded: its record says which harness ran it, whatever the state names now.
    assert.strictEqual(harnessOfLog({ ...several, agent: "claude" }, [record(2, { harness: "claude" }), record(3, { harness: "codex" })]), "codex")
    // Not recorded yet (it runs): the agent the state names.
    assert.strictEqual(harnessOfLog(several, [record(2, { harness: "claude" })]), "codex")
    // A record of the same number in an earlier run is another iteration.
    assert.strictEqual(harnessOfLog(several, [record(3, { run: "r0", harness: "claude" })]), "codex")
    // A run of one agent, or records and state written before agents were kept: the run's harness.
    assert.strictEqual(harnessOfLog({ ...state, harness: "claude" }, [record(3)]), "claude")
    assert.strictEqual(harnessOfLog(state, []), undefined)
  })

  it("reads the end of a file as whole lines and whole characters", () => {
    assert.deepStrictEqual(decodeTail(bytes("first\nsecond é"), true), { text: "first\nsecond é", truncated: false })
    // A cut file starts at its first whole line: never inside a line, nor inside a character.
    const cut = bytes("é partial\nwhole line\n").subarray(1)
    assert.deepStrictEqual(decodeTail(cut, false), { text: "whole line\n", truncated: true })
    // A character still being written waits for the next read, rather than showing as a replacement.
    const writing = bytes("done\nhalf €").subarray(0, -1)
    assert.deepStrictEqual(decodeTail(writing, true), { text: "done\nhalf ", truncated: false })
    assert.deepStrictEqual(decodeTail(bytes("no line break yet"), false), { text: "", truncated: true })
  })

  it("shows the agent's output of an iteration log, not the prompt before it", () => {
    const log = "=== prompt (iteration 2) ===\nDo it.\n=== output ===\nworking\n<script>x</script>\n"
    assert.deepStrictEqual(iterationOutput({ text: log, truncated: false }), { text: "working\n<script>x</script>\n", truncated: false })
    // The prompt is still being written: no output yet.
    assert.deepStrictEqual(iterationOutput({ text: "=== prompt (iteration 2) ===\nDo", truncated: false }), { text: "", truncated: false })
    // A long output: the end is all output, and says it was cut.
    assert.deepStrictEqual(iterationOutput({ text: "line 900\nline 901\n", truncated: true }), { text: "line 900\nline 901\n", truncated: true })
  })

  it("leaves the journal's entry markers out", () => {
    const journal = "<!-- spool:error-entry -->\n## iteration 2\nboom\n<!-- spool:error-entry -->\n## iteration 3\n"
    assert.deepStrictEqual(journalText({ text: journal, truncated: false }), { text: "## iteration 2\nboom\n## iteration 3\n", truncated: false })
  })
})

describe("the dashboard's reading of the loop state on disk", () => {
  const setup = () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "spool-dashboard-")))
    fs.mkdirSync(path.join(root, ".spool/changes/001-01_x"), { recursive: true })
    const layer = HistoryStore.layer.pipe(Layer.provideMerge(Workspace.layer(root)), Layer.provideMerge(NodeContext.layer))
    const dir = (id: string) => path.join(root, ".spool/.state/ralph", id)
    return { root, dir, layer }
  }
  const redact = makeRedactor({ API_TOKEN: "s3cr3t-value" })

  it.effect("lists every loop, and a change whose state cannot be read with the reason", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.writeState(changeId, state)
      yield* store.append(changeId, record(1))
      fs.mkdirSync(dir("001-02_broken"), { recursive: true })
      fs.writeFileSync(path.join(dir("001-02_broken"), "state.json"), "{ not json")
      // Context alone is no loop.
      fs.mkdirSync(dir("001-03_context"), { recursive: true })
      fs.writeFileSync(path.join(dir("001-03_context"), "context.txt"), "be brief\n")
      const loops = yield* loadDashboardLoops
      assert.deepStrictEqual(loops.map((loop) => loop.changeId), ["001-01_x", "001-02_broken"])
      assert.deepInclude(loops[0]!, { status: "running", iteration: 3, problem: null })
      assert.match(loops[1]!.problem ?? "", /state\.json/)
      assert.deepStrictEqual({ ...loops[1]!, problem: "" }, unreadableLoop("001-02_broken", ""))
    }).pipe(Effect.provide(layer))
  })

  it.effect("reads a change's page: its iterations, its journal and the running iteration's output, redacted", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.writeState(changeId, state)
      for (let i = 1; i <= 12; i++) yield* store.append(changeId, record(i))
      fs.mkdirSync(path.join(dir(changeId), "logs"), { recursive: true })
      fs.writeFileSync(path.join(dir(changeId), "logs", "r1-002.log"), "=== prompt (iteration 2) ===\nold\n=== output ===\nold output\n")
      fs.writeFileSync(
        path.join(dir(changeId), "logs", "r1-003.log"),
        "=== prompt (iteration 3) ===\nDo it.\n=== output ===\nusing s3cr3t-value now\nlatest line\n"
      )
      fs.writeFileSync(path.join(dir(changeId), "errors.md"), "<!-- spool:error-entry -->\n## iteration 2\nfailed with s3cr3t-value\n")
      const detail = Option.getOrThrow(yield* loadDashboardDetail("001-01_x", redact))
      // The page charts more than --status's ten iterations.
      assert.deepStrictEqual(detail.iterations.map((i) => i.iteration), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
      assert.deepStrictEqual(detail.output, { text: "using [REDACTED] now\nlatest line\n", truncated: false, run: "r1", iteration: 3 })
      assert.deepStrictEqual(detail.journal, { text: "## iteration 2\nfailed with [REDACTED]\n", truncated: false })
      // A long log: its last 64 KiB, from a whole line on.
      fs.appendFileSync(path.join(dir(changeId), "logs", "r1-003.log"), "x".repeat(100).concat("\n").repeat(1000) + "the end\n")
      const long = Option.getOrThrow(yield* loadDashboardDetail("001-01_x", redact)).output!
      assert.isTrue(long.truncated)
      assert.isTrue(long.text.endsWith("the end\n"))
      assert.isTrue(long.text.startsWith("x".repeat(100) + "\n"))
      assert.isAtMost(new TextEncoder().encode(long.text).length, 64 * 1024)
    }).pipe(Effect.provide(layer))
  })

  it.effect("passes the view the harness that ran the iteration whose output it shows", () => {
    const { dir, layer } = setup()
    const view = (_: LoopState, output: string, harness: string | undefined) => `${harness ?? "as logged"}: ${output}`
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.writeState(changeId, { ...state, harness: "claude", agent: "claude", agents: [note("claude", "claude"), note("codex:gpt-5.5", "codex")] })
      yield* store.append(changeId, record(2, { agent: "claude", harness: "claude" }))
      yield* store.append(changeId, record(3, { agent: "codex:gpt-5.5", harness: "codex" }))
      fs.mkdirSync(path.join(dir(changeId), "logs"), { recursive: true })
      fs.writeFileSync(path.join(dir(changeId), "logs", "r1-003.log"), "=== prompt (iteration 3) ===\nDo it.\n=== output ===\n{}\n")
      assert.strictEqual(Option.getOrThrow(yield* loadDashboardDetail("001-01_x", redact, view)).output!.text, "codex: {}\n")
    }).pipe(Effect.provide(layer))
  })

  it.effect("finds no page for an invalid id, an unknown change, or one without loop state", () => {
    const { dir, layer } = setup()
    return Effect.gen(function*() {
      fs.mkdirSync(dir("001-03_context"), { recursive: true })
      for (const id of ["../x", "..", "a/b", "", "001-09_unknown", "001-03_context", "%2e%2e"]) {
        assert.isTrue(Option.isNone(yield* loadDashboardDetail(id, redact)), id)
      }
    }).pipe(Effect.provide(layer))
  })

  it.effect("reads nothing a link in the state leads to outside it", () => {
    const { root, dir, layer } = setup()
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "spool-outside-"))
    fs.writeFileSync(path.join(outside, "secret.txt"), "=== output ===\nthe secret\n")
    fs.mkdirSync(path.join(outside, "999-01_elsewhere"))
    fs.writeFileSync(path.join(outside, "999-01_elsewhere", "state.json"), JSON.stringify({ ...state, changeId: "999-01_elsewhere" }))
    return Effect.gen(function*() {
      const store = yield* HistoryStore
      yield* store.writeState(changeId, state)
      fs.mkdirSync(path.join(dir(changeId), "logs"), { recursive: true })
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir(changeId), "logs", "r1-003.log"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir(changeId), "errors.md"))
      // A change's whole state directory linked elsewhere is not the repository's loop state.
      fs.symlinkSync(path.join(outside, "999-01_elsewhere"), path.join(root, ".spool/.state/ralph/999-01_elsewhere"))
      const detail = Option.getOrThrow(yield* loadDashboardDetail("001-01_x", redact))
      assert.isNull(detail.output)
      assert.deepStrictEqual(detail.journal, { text: "", truncated: false })
      assert.deepStrictEqual((yield* loadDashboardLoops).map((loop) => loop.changeId), ["001-01_x"])
      assert.isTrue(Option.isNone(yield* loadDashboardDetail("999-01_elsewhere", redact)))
    }).pipe(Effect.provide(layer))
  })
})
