import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Random, Stream, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ChangeId, type LoopState } from "../src/domain/Domain.js"
import { GitSummary } from "../src/git/GitSummary.js"
import { HarnessEvent, type HarnessRequest, HarnessService, scriptedRun } from "../src/harness/HarnessService.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { runLoop } from "../src/loop/Loop.js"
import { LoopReporter } from "../src/output/LoopReporter.js"
import { Workspace } from "../src/state/Workspace.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"
import { changeId, done, options, runWith, sharedHistory } from "./loopFixture.js"
import { lockFileOf, loopOn, processLayer, workspaceWith } from "./manyLoopsFixture.js"

const id = "001-01_alpha"

/** Runs the loop on `id` in a workspace on disk, doing `midway` to the lock during the first iteration. */
const loseLockMidway = (midway: (lock: string) => void) =>
  Effect.gen(function*() {
    const root = workspaceWith([id])
    const loop = loopOn({
      id,
      script: (request) => {
        if (request.iteration === 1) midway(lockFileOf(root, id))
        return scriptedRun(request.iteration === 2 ? done : "step one\n")
      }
    })
    return yield* Effect.gen(function*() {
      const exit = yield* Effect.exit(loop.run)
      const state = Option.getOrNull(yield* Effect.orDie((yield* HistoryStore).readState(ChangeId.make(id))))
      return { exit, state, prompts: loop.prompts, lock: fs.existsSync(lockFileOf(root, id)) ? fs.readFileSync(lockFileOf(root, id), "utf8") : null }
    }).pipe(Effect.provide(processLayer(root)))
  })

/** Each record as `[iteration, agent, outcome]`. */
const ran = (records: ReadonlyArray<{ readonly iteration: number; readonly agent?: string; readonly outcome: string }>) =>
  records.map((r) => [r.iteration, r.agent, r.outcome])

const failureOf = <A, E>(exit: Exit.Exit<A, E>) => (Exit.isFailure(exit) ? Option.getOrNull(Cause.failureOption(exit.cause)) : null)

describe("a run's lock and name", () => {
  it.effect("stops before the next iteration once its lock file was removed, recording why", () =>
    Effect.gen(function*() {
      const { exit, state, prompts } = yield* loseLockMidway((lock) => fs.rmSync(lock))
      const error = failureOf(exit)
      assert.deepInclude(error, { _tag: "LockLostError", reason: "Removed" })
      assert.include(error!.message, "the loop on 001-01_alpha lost its lock")
      assert.deepStrictEqual(prompts.map((p) => p.iteration), [1])
      assert.deepInclude(state, { status: "failed", stopReason: "error", stopMessage: error!.message, iteration: 1 })
    }))

  it.effect("stops once another loop took its lock, leaving that loop's lock and the state alone", () =>
    Effect.gen(function*() {
      const other = JSON.stringify({ pid: 4242, host: "elsewhere", startedAt: "2026-11-01T09:00:00.000Z" })
      const { exit, state, prompts, lock } = yield* loseLockMidway((path) => fs.writeFileSync(path, other))
      assert.deepInclude(failureOf(exit), { _tag: "LockLostError", reason: "TakenOver", owner: JSON.parse(other) })
      assert.deepStrictEqual(prompts.map((p) => p.iteration), [1])
      assert.strictEqual(lock, other)
      assert.deepInclude(state, { status: "running", stopReason: null, iteration: 1 })
    }))

  it.effect("takes its run's tag from Random: the same seed and start, the same run id", () =>
    Effect.gen(function*() {
      const runIdWith = (seed: number) =>
        runWith(() => scriptedRun(done), {}, undefined, { setup: TestClock.setTime(Date.UTC(2026, 10, 1, 10)) }).pipe(
          Effect.map(({ records }) => records[0]!.run),
          Effect.withRandom(Random.make(seed))
        )
      const first = yield* runIdWith(42)
      assert.match(first, /^20261101T100000Z-[0-9a-z]{4}$/)
      assert.strictEqual(yield* runIdWith(42), first)
      assert.notStrictEqual(yield* runIdWith(43), first)
      // Seed 2 draws a tag of three digits in base 36 ("trm"): it is padded to four.
      assert.strictEqual(yield* runIdWith(2), "20261101T100000Z-0trm")
    }))
})

describe("a run's state", () => {
  it.effect("is written before the first iteration as at iteration 0, its time counted from the run's start", () =>
    Effect.gen(function*() {
      const written: Array<LoopState> = []
      const history = Layer.effect(
        HistoryStore,
        Effect.map(HistoryStore, (store) =>
          HistoryStore.of({
            ...store,
            writeState: (changeId, state) => Effect.zipRight(Effect.sync(() => void written.push(state)), store.writeState(changeId, state))
          }))
      ).pipe(Layer.provide(HistoryStore.layerMemory))
      const start = Date.UTC(2026, 10, 1, 10)
      const { exit } = yield* runWith(() => scriptedRun(done), {}, undefined, { history, setup: TestClock.setTime(start) })
      assert.isTrue(Exit.isSuccess(exit))
      assert.deepInclude(written[0], { status: "running", iteration: 0, startedAt: "2026-11-01T10:00:00.000Z", elapsedMs: 0 })
      assert.deepStrictEqual(written.map((state) => state.elapsedMs), written.map(() => 0))
      assert.deepInclude(written.at(-1), { status: "complete", iteration: 1 })
    }))
})

describe("a sandboxed run", () => {
  /** Runs the loop on `id` on disk, with `sandbox` as the run's walls; its state and records. */
  const sandboxedRun = (sandbox: Parameters<typeof runLoop>[0]["sandbox"]) =>
    Effect.gen(function*() {
      const root = workspaceWith([id])
      const harness = Layer.succeed(HarnessService, { name: "test", reports: { cost: true, tokens: true }, preflight: Effect.void, run: () => Stream.fromIterable(scriptedRun(done)) })
      return yield* Effect.gen(function*() {
        const change = yield* Effect.orDie((yield* Workspace).resolveChange(id))
        yield* runLoop({
          change, userPrompt: "Build it.", options: options({}), cwd: root, pid: process.pid, redact: (text) => text,
          ...(sandbox === undefined ? {} : { sandbox })
        }).pipe(Effect.provide(Layer.mergeAll(harness, LoopReporter.layerTest([]), GitSummary.layerTest())))
        const history = yield* HistoryStore
        const state = Option.getOrNull(yield* Effect.orDie(history.readState(ChangeId.make(id))))
        return { state, records: (yield* Effect.orDie(history.recent(ChangeId.make(id), 10))).records }
      }).pipe(Effect.provide(processLayer(root)))
    })

  it.effect("keeps its walls in the loop's state and marks each iteration sandboxed; an open run has neither", () =>
    Effect.gen(function*() {
      const walls = { runtime: "sandbox-runtime", hosts: ["api.example.test"], denyRead: ["~/.aws"], passEnv: ["CI"] }
      const walled = yield* sandboxedRun(walls)
      assert.deepStrictEqual(walled.state?.sandbox, walls)
      assert.deepStrictEqual(walled.records.map((r) => r.sandboxed), [true])
      const open = yield* sandboxedRun(undefined)
      assert.notProperty(open.state, "sandbox")
      assert.deepStrictEqual(open.records.map((r) => r.sandboxed), [undefined])
    }))
})

describe("a resumed run", () => {
  it.effect("that used every iteration --max-iterations allows says so, and how to go on", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      yield* runWith(() => scriptedRun("working\n"), { maxIterations: 2 }, undefined, { history })
      const { exit, output } = yield* runWith(() => scriptedRun(done), { maxIterations: 2 }, undefined, { history, resume: true })
      const message = "stopped: --max-iterations (2) reached before this sitting; raise it to go on"
      assert.deepStrictEqual(Exit.map(exit, (r) => r.message), Exit.succeed(message))
      assert.include(output, message)
    }))
})

describe("a resumed run with several agents", () => {
  const limited = (resetAt: number) => [
    HarnessEvent.Limited({ message: "usage limit reached", resetAt, retryAfterMs: null, resets: true }),
    HarnessEvent.Exited({ exitCode: 1, signal: null })
  ]

  /** The shared history, with every state written to it kept in `written`. */
  const recordingHistory = Effect.map(sharedHistory, ({ store }) => {
    const written: Array<LoopState> = []
    const history = Layer.succeed(HistoryStore, HistoryStore.of({
      ...store,
      writeState: (changeId, state) => Effect.zipRight(Effect.sync(() => void written.push(state)), store.writeState(changeId, state))
    }))
    return { store, history, written }
  })

  it.effect("first writes the agent that ran last and the limits still holding; a limit lifted by then is dropped", () =>
    Effect.gen(function*() {
      const { history, written } = yield* recordingHistory
      const fallbacks = (codex: () => ReadonlyArray<HarnessEvent>) => [{ id: "codex", script: codex }, { id: "pi", script: () => scriptedRun("step\n") }]
      // Iteration 1: test is held for an hour, codex for ten minutes; pi runs it.
      yield* runWith(() => limited(3_600_000), { maxIterations: 1 }, undefined, { history, fallbacks: fallbacks(() => limited(600_000)) })
      // Taken up again just as codex's limit lifts.
      yield* TestClock.setTime(600_000)
      written.length = 0
      const resumed = yield* runWith(() => scriptedRun(done), { maxIterations: 2 }, undefined, { history, resume: true, fallbacks: fallbacks(() => scriptedRun(done)) })
      assert.deepInclude(written[0], { status: "running", iteration: 1, agent: "pi" })
      assert.deepStrictEqual(written[0]!.agents?.map((a) => [a.agent, a.iterations, a.limitedUntil]), [
        ["test", 1, "1970-01-01T01:00:00.000Z"],
        ["codex", 1, null],
        ["pi", 1, null]
      ])
      assert.deepStrictEqual(ran(resumed.records).slice(3), [[2, "codex", "complete"]])
    }))

  it.effect("with --rotate, goes on in turn after the agent that ran last, the first agent too", () =>
    Effect.gen(function*() {
      const { history } = yield* sharedHistory
      const fallbacks = [{ id: "codex", script: () => scriptedRun("codex step\n") }]
      yield* runWith(() => scriptedRun("step\n"), { maxIterations: 1 }, undefined, { history, rotate: true, fallbacks })
      const resumed = yield* runWith(() => scriptedRun("step\n"), { maxIterations: 3 }, undefined, { history, rotate: true, resume: true, fallbacks })
      assert.deepStrictEqual(ran(resumed.records), [[1, "test", "continue"], [2, "codex", "continue"], [3, "test", "continue"]])
    }))

  it.effect("counts toward --max-reviews the claims its reviewers turned down in this run only", () =>
    Effect.gen(function*() {
      const { store, history } = yield* sharedHistory
      const asked = "I read the diff.\n<verdict>changes</verdict>\n- handle an empty name\n"
      const reviewers = [{ id: "claude", script: () => scriptedRun(asked) }]
      // An earlier run's two rejections count for that run alone.
      for (const iteration of [1, 2]) yield* Effect.orDie(store.append(changeId, iterationRecord({ run: "20261126T100000Z-old0", iteration, outcome: "changes" })))
      // This run: two iterations of work, then a claim turned down (1 of --max-reviews 2).
      const script = (request: HarnessRequest) => scriptedRun(request.iteration === 3 || request.iteration === 4 ? done : "step\n")
      yield* runWith(script, { maxIterations: 3 }, undefined, { history, reviewers, maxReviews: 2 })
      const resumed = yield* runWith(script, { maxIterations: 6 }, undefined, { history, reviewers, maxReviews: 2, resume: true })
      const message = "stopped: the review turned the claim down 2 times (--max-reviews 2); the last: review by claude: changes asked: - handle an empty name; a person should look (spool ralph --status)"
      assert.deepStrictEqual(Exit.map(resumed.exit, (r) => [r.status, r.iterations, r.message] as const), Exit.succeed(["review-rejected", 4, message] as const))
    }))
})

describe("a run's time", () => {
  const T0 = Date.parse("2026-11-27T10:00:00.000Z")

  it.effect("goes by the resumed run's own iterations for --deadline, not those of earlier runs", () =>
    Effect.gen(function*() {
      const { store, history } = yield* sharedHistory
      const earlier = iterationRecord({ run: "20261126T100000Z-old0", startedAt: "2026-11-26T10:00:00.000Z", durationMs: 40 * 60_000 })
      yield* Effect.orDie(store.append(changeId, earlier))
      yield* TestClock.setTime(T0)
      const first = yield* runWith(() => scriptedRun("working\n"), { maxIterations: 1 }, undefined, { history })
      assert.deepStrictEqual(Exit.map(first.exit, (r) => r.status), Exit.succeed("max-iterations" as const))
      // Ten minutes are left: the run's own iteration took none, the earlier run's took forty.
      const resumed = yield* runWith(() => scriptedRun(done), { maxIterations: 5 }, undefined, { history, resume: true, deadline: T0 + 10 * 60_000 })
      assert.deepStrictEqual(Exit.map(resumed.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 2] as const))
      assert.deepStrictEqual(resumed.prompts.map((p) => p.iteration), [2])
    }))

  it.effect("starts no iteration of a resumed run that its own longest would not end before --deadline", () =>
    Effect.gen(function*() {
      const { store, history } = yield* sharedHistory
      yield* TestClock.setTime(T0)
      const first = yield* runWith(() => scriptedRun("working\n"), { maxIterations: 1 }, undefined, { history })
      const own = first.records[0]!
      yield* Effect.orDie(store.append(changeId, { ...own, iteration: 2, durationMs: 40 * 60_000 }))
      const resumed = yield* runWith(() => scriptedRun(done), { maxIterations: 5 }, undefined, { history, resume: true, deadline: T0 + 10 * 60_000 })
      assert.deepStrictEqual(Exit.map(resumed.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["deadline", 2] as const))
      assert.deepStrictEqual(resumed.prompts, [])
      assert.include(resumed.output, "the longest so far took 40m00s")
    }))

  it.effect("starts a new run with --deadline whatever an earlier run's iterations took", () =>
    Effect.gen(function*() {
      const { store, history } = yield* sharedHistory
      yield* TestClock.setTime(T0)
      const earlier = yield* runWith(() => scriptedRun("working\n"), { maxIterations: 1 }, undefined, { history })
      yield* Effect.orDie(store.append(changeId, { ...earlier.records[0]!, iteration: 2, durationMs: 40 * 60_000 }))
      const fresh = yield* runWith(() => scriptedRun(done), {}, undefined, { history, deadline: T0 + 10 * 60_000 })
      assert.deepStrictEqual(Exit.map(fresh.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 1] as const))
      assert.notStrictEqual(fresh.records.at(-1)!.run, earlier.records[0]!.run)
    }))

  it.effect("gives up a usage limit at once when its wait would outlast --max-duration, though --deadline is later", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const limited = [
        HarnessEvent.Limited({ message: "429 rate limited", resetAt: T0 + 60 * 60_000, retryAfterMs: null, resets: true }),
        HarnessEvent.Exited({ exitCode: 1, signal: null })
      ]
      const { exit, prompts } = yield* runWith(() => limited, { maxDurationMs: 30 * 60_000, maxLimitWaitMs: 6 * 3_600_000 }, undefined, {
        deadline: T0 + 2 * 3_600_000
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("usage-limit" as const))
      assert.include(Exit.isSuccess(exit) ? exit.value.message : "", "the limit lifts at 2026-11-27T11:01:00Z, past --max-duration")
      assert.strictEqual(prompts.length, 1)
    }))
})

describe("a loop on a change of another tree", () => {
  /** A spec-kit project holding feature 001-feat with its spec, plan and tasks. */
  const speckit = () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "spool-speckit-")))
    const feature = path.join(root, "specs", "001-feat")
    fs.mkdirSync(path.join(root, ".specify", "memory"), { recursive: true })
    fs.mkdirSync(feature, { recursive: true })
    fs.writeFileSync(path.join(feature, "spec.md"), "# Feature: greet\n")
    fs.writeFileSync(path.join(feature, "plan.md"), "\n# Plan\nUse Effect.\n\n")
    fs.writeFileSync(path.join(feature, "tasks.md"), "## Phase 1\n\n- [ ] T001 Greet\n")
    return root
  }

  it.effect("quotes its plan, gives its rules and names the tree's folder among what it leaves uncommitted", () =>
    Effect.gen(function*() {
      const root = speckit()
      const loop = loopOn({ id: "001-feat", script: () => scriptedRun(done), git: GitSummary.layerTest({ dirty: ["README.md", "notes.txt"] }) })
      const exit = yield* Effect.exit(loop.run).pipe(Effect.provide(processLayer(root, undefined, "speckit")))
      assert.deepStrictEqual(Exit.map(exit, (result) => result.status), Exit.succeed("complete" as const))
      const prompt = loop.prompts[0]!.prompt
      assert.include(prompt, "### Change proposal (`001-feat`)\n\n# Feature: greet\n\n### Plan\n\n# Plan\nUse Effect.\n")
      assert.include(prompt, "\n- This change is a spec-kit feature (`specs/001-feat/`): follow the project's constitution")
      assert.include(
        loop.output(),
        "warning: the work tree holds 2 uncommitted changes outside .spool/ and specs/ (README.md, notes.txt): spool commits only what each iteration changes"
      )
    }))
})
