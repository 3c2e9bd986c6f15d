import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { CheckRunner } from "../src/verify/CheckRunner.js"
import { ContextStore } from "../src/state/ContextStore.js"
import type { LoopOptions } from "../src/domain/Domain.js"
import { ErrorJournal } from "../src/state/ErrorJournal.js"
import { GitSummary } from "../src/git/GitSummary.js"
import { type HarnessEvent, type HarnessRequest, HarnessService } from "../src/harness/HarnessService.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { LoopEvents } from "../src/live/LoopEvents.js"
import { LoopAgents } from "../src/agents/LoopAgents.js"
import { LoopLock } from "../src/state/LoopLock.js"
import { LoopReporter } from "../src/output/LoopReporter.js"
import { PromptBuilder } from "../src/prompt/PromptBuilder.js"
import { runLoop } from "../src/loop/Loop.js"
import type { LoopWorktree } from "../src/loop/LoopRequest.js"
import { UsageLimitGate } from "../src/guards/UsageLimitGate.js"
import { Workspace } from "../src/state/Workspace.js"
import type { LayoutName } from "../src/tree/Layout.js"
import { options } from "./loopFixture.js"

/** A workspace on disk holding one change per id. */
export const workspaceWith = (ids: ReadonlyArray<string>) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "spool-many-")))
  for (const id of ids) {
    fs.mkdirSync(path.join(root, ".spool", "changes", id), { recursive: true })
    fs.writeFileSync(path.join(root, ".spool", "changes", id, "proposal.md"), `# ${id}\n`)
  }
  return root
}

export const lockFileOf = (root: string, id: string) => path.join(root, ".spool", ".state", "ralph", id, "lock")

/**
 * What every loop of one process shares: the workspace's stores and locks on disk, the events,
 * and the usage-limit gates (one per loop unless told otherwise).
 */
export const processLayer = (
  root: string,
  gate: Layer.Layer<UsageLimitGate> = UsageLimitGate.layerPerLoop,
  layout: LayoutName | null = null
) =>
  Layer.mergeAll(
    ContextStore.layer,
    HistoryStore.layer,
    ErrorJournal.layer,
    LoopLock.layer({ pid: process.pid, host: "here", isAlive: () => true }),
    LoopEvents.layer,
    gate,
    PromptBuilder.layer,
    CheckRunner.layerTest(() => ({ exitCode: 0, signal: null, timedOut: false, durationMs: 0, output: "" }))
  ).pipe(Layer.provideMerge(Workspace.layer(root, layout)), Layer.provideMerge(NodeContext.layer))

/** One loop of the process: its change, its agent and its own reporter. */
export interface LoopOn {
  readonly id: string
  readonly script: (request: HarnessRequest) => ReadonlyArray<HarnessEvent> | Stream.Stream<HarnessEvent>
  /** An agent `codex` to fall back to, playing its own script. */
  readonly fallback?: (request: HarnessRequest) => ReadonlyArray<HarnessEvent>
  readonly options?: Partial<LoopOptions>
  /** The worktree the loop runs in, as the request names it (default: none). */
  readonly worktree?: LoopWorktree
  /** The repository as the loop sees it (default: a scripted one with nothing changed). */
  readonly git?: Layer.Layer<GitSummary>
}

/** Runs the loop on `spec.id` with its own agent and reporter; `output` is what that reporter was told. */
export const loopOn = (spec: LoopOn) => {
  const output: Array<string> = []
  const prompts: Array<HarnessRequest> = []
  const harness = Layer.succeed(HarnessService, {
    name: "test",
    reports: { cost: true, tokens: true },
    preflight: Effect.void,
    run: (request) =>
      Stream.suspend(() => {
        prompts.push(request)
        const events = spec.script(request)
        return Array.isArray(events) ? Stream.fromIterable(events) : events as Stream.Stream<HarnessEvent>
      })
  })
  const agents = spec.fallback === undefined ? Layer.empty : Layer.effect(
    LoopAgents,
    Effect.map(HarnessService, (primary) => ({
      agents: [
        { id: "test", harness: "test", model: null, service: primary },
        {
          id: "codex",
          harness: "codex",
          model: null,
          service: {
            name: "codex",
            reports: { cost: true, tokens: true },
            preflight: Effect.void,
            run: (request: HarnessRequest) =>
              Stream.suspend(() => {
                prompts.push(request)
                return Stream.fromIterable(spec.fallback!(request))
              })
          }
        }
      ] as const,
      rotate: false
    }))
  ).pipe(Layer.provideMerge(harness))
  const run = Effect.gen(function*() {
    const workspace = yield* Workspace
    const change = yield* Effect.orDie(workspace.resolveChange(spec.id))
    return yield* runLoop({
      change,
      userPrompt: `Build ${spec.id}.`,
      options: options(spec.options),
      cwd: workspace.root,
      pid: process.pid,
      redact: (text) => text,
      ...(spec.worktree === undefined ? {} : { worktree: spec.worktree })
    }).pipe(Effect.provide(Layer.mergeAll(harness, agents, LoopReporter.layerTest(output), spec.git ?? GitSummary.layerTest())))
  })
  return { run, output: () => output.join(""), prompts }
}
