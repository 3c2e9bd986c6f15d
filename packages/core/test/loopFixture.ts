import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Option, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { CheckRunner } from "../src/verify/CheckRunner.js"
import type { Checkpoint } from "../src/remote/Checkpoint.js"
import { ContextStore } from "../src/state/ContextStore.js"
import { ChangeId, type LoopOptions, type SettingsSource } from "../src/domain/Domain.js"
import { ErrorJournal } from "../src/state/ErrorJournal.js"
import { GitSummary } from "../src/git/GitSummary.js"
import type { HarnessEvent, HarnessRequest } from "../src/harness/HarnessService.js"
import { HarnessService } from "../src/harness/HarnessService.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { runLoop } from "../src/loop/Loop.js"
import type { LoopWorktree } from "../src/loop/LoopRequest.js"
import { LoopLock } from "../src/state/LoopLock.js"
import { LoopEvents } from "../src/live/LoopEvents.js"
import { type LoopAgent, LoopAgents } from "../src/agents/LoopAgents.js"
import { UsageLimitGate } from "../src/guards/UsageLimitGate.js"
import { LoopReviewers, MAX_REVIEWS } from "../src/review/Reviewers.js"
import { ReviewGit } from "../src/review/ReviewGit.js"
import { type LoopProgress, LoopReporter } from "../src/output/LoopReporter.js"
import { PromptBuilder } from "../src/prompt/PromptBuilder.js"
import type { Change } from "../src/state/Workspace.js"

export const changeId = ChangeId.make("002-01_add-ralph-loop")

/** One history in memory for several runs of a test (a later run resumes an earlier one), and its store for what the test reads or writes beside them. */
export const sharedHistory = Effect.map(Effect.provide(HistoryStore, HistoryStore.layerMemory), (store) => ({ store, history: Layer.succeed(HistoryStore, store) }))

const makeChange = (tasks?: string, documents: Record<string, string> = {}): Change => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "spool-loop-"))
  fs.writeFileSync(path.join(dir, "proposal.md"), "# Proposal\nAdd the loop.\n")
  if (tasks !== undefined) fs.writeFileSync(path.join(dir, "tasks.md"), tasks)
  for (const [name, text] of Object.entries(documents)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
  fs.writeFileSync(path.join(dir, "module.md"), "# Module\n")
  return {
    id: changeId,
    moduleId: null,
    dir,
    proposalPath: path.join(dir, "proposal.md"),
    tasksPath: path.join(dir, "tasks.md"),
    modulePath: path.join(dir, "module.md")
  }
}

import { options } from "./fixtures/loopOptions.js"

export { options }

export const done = "all good\n<promise>COMPLETE</promise>\n"

/** An agent that reports `events` and then works on, silent, until it is stopped. */
export const hangsAfter = (...events: ReadonlyArray<HarnessEvent>) => Stream.concat(Stream.fromIterable(events), Stream.never)

/** What the fixture's redactor hides, as a secret in the environment would be. */
export const SECRET = "SECRET-VALUE-42"

/** Runs the loop against in-memory stores and a harness that plays `script`, returning what it saw. */
export const runWith = (
  script: (
    request: HarnessRequest
  ) => ReadonlyArray<HarnessEvent> | Stream.Stream<HarnessEvent> | Effect.Effect<ReadonlyArray<HarnessEvent>, never, ContextStore>,
  loopOptions: Partial<LoopOptions> = {},
  git: Layer.Layer<GitSummary> = GitSummary.layerTest(),
  extras: {
    readonly tasks?: string
    /** Further files of the change, by their paths in its directory. */
    readonly documents?: Record<string, string>
    readonly setup?: Effect.Effect<void, never, ErrorJournal>
    /** What the harness says it reports (default: cost and tokens). */
    readonly reports?: { readonly cost: boolean; readonly tokens: boolean }
    /** Runs beside the loop, with what it has printed so far (e.g. to move a test clock once it waits). */
    readonly during?: (output: () => string) => Effect.Effect<void, never, HistoryStore>
    /** The runner of `--verify` checks (default: every check passes at once, printing nothing). */
    readonly checks?: Layer.Layer<CheckRunner>
    /** The journal of failures (default: one in memory). */
    readonly journal?: Layer.Layer<ErrorJournal>
    /** The change's lock (default: one in memory, free). */
    readonly lock?: Layer.Layer<LoopLock>
    /** Where the options came from, as the run is given it. */
    readonly settings?: SettingsSource
    /** The worktree the loop runs in, as the request names it. */
    readonly worktree?: LoopWorktree | null
    /** Where the loop publishes its states and records (default: a fresh one nobody reads). */
    readonly events?: Layer.Layer<LoopEvents>
    /** The change's state and history (default: fresh ones in memory); one store shared by two runs lets the second resume the first. */
    readonly history?: Layer.Layer<HistoryStore>
    /** Run with `--resume`. */
    readonly resume?: boolean
    /** `--deadline`, as epoch ms. */
    readonly deadline?: number
    /** Where the loop keeps its work beyond the machine (default: none given). */
    readonly checkpoint?: Layer.Layer<Checkpoint>
    /** Agents after the scripted one (`test`), each playing its own script, and whether they take turns. */
    readonly fallbacks?: ReadonlyArray<{
      readonly id: string
      readonly script: (request: HarnessRequest) => ReadonlyArray<HarnessEvent> | Stream.Stream<HarnessEvent>
    }>
    readonly rotate?: boolean
    /** Reviewers of a claim (`--review`), each playing its own script; what their git shows and how many rejections stop the loop. */
    readonly reviewers?: ReadonlyArray<{
      readonly id: string
      readonly script: (request: HarnessRequest) => ReadonlyArray<HarnessEvent> | Stream.Stream<HarnessEvent>
    }>
    readonly maxReviews?: number
    /** The review's git (default: a diff of one file, work trees told to `reviewTrees`). */
    readonly reviewGit?: Layer.Layer<ReviewGit>
    /** Receives each review work tree made and removed. */
    readonly reviewTrees?: Array<string>
  } = {}
) =>
  Effect.gen(function*() {
    const prompts: Array<HarnessRequest> = []
    const output: Array<string> = []
    const progress: Array<LoopProgress> = []
    const harness = Layer.effect(
      HarnessService,
      Effect.map(ContextStore, (contexts) => ({
        name: "test",
        reports: extras.reports ?? { cost: true, tokens: true },
        preflight: Effect.void,
        run: (request: HarnessRequest) =>
          Stream.unwrap(Effect.suspend((): Effect.Effect<Stream.Stream<HarnessEvent>> => {
            prompts.push(request)
            const events: unknown = script(request)
            if (Array.isArray(events)) return Effect.succeed(Stream.fromIterable(events as ReadonlyArray<HarnessEvent>))
            if (Stream.StreamTypeId in (events as object)) return Effect.succeed(events as Stream.Stream<HarnessEvent>)
            const effect = events as Effect.Effect<ReadonlyArray<HarnessEvent>, never, ContextStore>
            return Effect.map(Effect.provideService(effect, ContextStore, contexts), (list) => Stream.fromIterable(list))
          }))
      }))
    )
    const fakeAgent = (id: string, play: (request: HarnessRequest) => ReadonlyArray<HarnessEvent> | Stream.Stream<HarnessEvent>): LoopAgent => ({
      id,
      harness: id.split(":")[0]!,
      model: id.split(":")[1] ?? null,
      service: {
        name: id,
        reports: { cost: true, tokens: true },
        preflight: Effect.void,
        run: (request: HarnessRequest) =>
          Stream.suspend(() => {
            prompts.push(request)
            const events = play(request)
            return Array.isArray(events) ? Stream.fromIterable(events) : events as Stream.Stream<HarnessEvent>
          })
      }
    })
    const fallbacks = extras.fallbacks ?? []
    const agents = fallbacks.length === 0 && extras.rotate === undefined ? Layer.empty : Layer.effect(
      LoopAgents,
      Effect.map(HarnessService, (primary) => ({
        agents: [
          { id: "test", harness: "test", model: null, service: primary },
          ...fallbacks.map(({ id, script: play }) => fakeAgent(id, play))
        ],
        rotate: extras.rotate ?? false
      }))
    ).pipe(Layer.provide(harness))
    const reviewers = extras.reviewers === undefined ? Layer.empty : Layer.mergeAll(
      Layer.succeed(LoopReviewers, {
        reviewers: extras.reviewers.map(({ id, script: play }) => fakeAgent(id, play)),
        maxReviews: extras.maxReviews ?? MAX_REVIEWS
      }),
      extras.reviewGit ?? ReviewGit.layerTest(
        [{ path: "src/app.ts", added: 3, deleted: 1, patch: "diff --git a/src/app.ts b/src/app.ts\n+export const greet = (name) => `hi ${name}`\n" }],
        extras.reviewTrees
      )
    )
    const stores = Layer.mergeAll(
      ContextStore.layerMemory,
      extras.history ?? HistoryStore.layerMemory,
      extras.journal ?? ErrorJournal.layerMemory,
      extras.lock ?? LoopLock.layerMemory
    )
    const layer = Layer.mergeAll(
      harness,
      agents,
      reviewers,
      git,
      PromptBuilder.layer,
      LoopReporter.layerTest(output, progress),
      extras.events ?? LoopEvents.layer,
      UsageLimitGate.layerPerLoop,
      extras.checks ?? CheckRunner.layerTest(() => ({ exitCode: 0, signal: null, timedOut: false, durationMs: 0, output: "" })),
      NodeFileSystem.layer,
      extras.checkpoint ?? Layer.empty
    ).pipe(Layer.provideMerge(stores))
    const change = makeChange(extras.tasks, extras.documents)
    return yield* Effect.gen(function*() {
      if (extras.setup) yield* extras.setup
      const loop = Effect.exit(
        runLoop({
          change,
          userPrompt: "Build it.",
          options: options(loopOptions),
          cwd: "/tmp",
          pid: 42,
          redact: (text) => text.replaceAll(SECRET, "[REDACTED]"),
          ...(extras.settings === undefined ? {} : { settings: extras.settings }),
          ...(extras.worktree === undefined ? {} : { worktree: extras.worktree }),
          ...(extras.resume === undefined ? {} : { resume: extras.resume }),
          ...(extras.deadline === undefined ? {} : { deadline: extras.deadline })
        })
      )
      const [exit] = yield* Effect.all([loop, extras.during?.(() => output.join("")) ?? Effect.void], { concurrency: 2 })
      const history = yield* HistoryStore
      const { records } = yield* history.recent(changeId, 100)
      const state = yield* history.readState(changeId)
      const journal = yield* (yield* ErrorJournal).read(changeId)
      return { exit, prompts, output: output.join(""), progress, records, state: Option.getOrNull(state), journal, change }
    }).pipe(Effect.provide(layer))
  })


/** Waits, in real time, until the loop has printed `text` (it reads files between steps of the test clock). */
export const untilPrinted = (output: () => string, text: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2000 && !output().includes(text); i++) {
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
    if (!output().includes(text)) return yield* Effect.dieMessage(`never printed ${JSON.stringify(text)}:\n${output()}`)
  })
