import { loopReviewers } from "../review/Reviewers.js"
import { Clock, Effect, Option, Ref } from "effect"
import { GitSummary } from "../git/GitSummary.js"
import { describeSpend, unsupportedCap } from "../guards/Guards.js"
import { type LimitGate, UsageLimitGate } from "../guards/UsageLimitGate.js"
import type { AgentNote } from "../domain/Domain.js"
import { type LoopAgents, loopAgents } from "../agents/LoopAgents.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { ContextStore } from "../state/ContextStore.js"
import { HistoryStore } from "../state/HistoryStore.js"
import { LoopLock } from "../state/LoopLock.js"
import { treeOf } from "../state/Workspace.js"
import { isTreePath } from "../tree/Layout.js"
import { listPaths } from "./Iteration.js"
import { type LoopInputs, makeLoopInputs } from "./LoopInputs.js"
import type { LoopRequest } from "./LoopRequest.js"
import type { LoopResult } from "./LoopResult.js"
import { checkpointOf, type LoopRun, makeLoopRun } from "./LoopRun.js"
import { planResume, type ResumePlan } from "./Resume.js"

/** How a run starts: it goes on, or `--resume` finds it done already. */
export type LoopStart = { readonly _tag: "Done"; readonly result: LoopResult } | { readonly _tag: "Started"; readonly run: LoopRun }

const fresh: ResumePlan = { _tag: "Fresh" }

/** What `--resume` makes of the change's last run, read from its state and the newest record of its history. */
const readResumePlan = (history: HistoryStore["Type"], changeId: LoopRequest["change"]["id"]) =>
  Effect.gen(function*() {
    const state = Option.getOrNull(yield* history.readState(changeId))
    const { records } = yield* history.recent(changeId, 1)
    return { plan: planResume(state, records.at(-1) ?? null), state }
  })

/**
 * Bad input stops the run before it writes anything: the agent must start, its caps must be
 * ones it reports, and everything an iteration reads is read once here.
 */
const checkInput = (input: LoopRequest, inputs: LoopInputs, { agents }: LoopAgents["Type"]) =>
  Effect.gen(function*() {
    const contexts = yield* ContextStore
    const { change, options } = input
    // Every agent of the list, fallbacks and reviewers too: one that cannot start, or whose spend a
    // cap cannot see, is refused now, not at a limit or a claim in the night.
    const all = [...agents, ...(yield* loopReviewers).reviewers]
    for (const { service } of all) {
      const unsupported = unsupportedCap(options, service.name, service.reports)
      if (unsupported !== null) return yield* unsupported
    }
    for (const { service } of all) yield* service.preflight
    yield* contexts.load(change.id)
    yield* inputs.readDocument(change.proposalPath)
    if (change.modulePath !== null) yield* inputs.readDocument(change.modulePath)
    yield* inputs.readQuoted
    yield* inputs.readTasks
  })

/**
 * The limits the run's last sitting met that still hold: an account's limit outlasts the sitting
 * (and the machine) that met it, so the run taken up again does not walk into it.
 */
const keepLimits = (gate: LimitGate, notes: ReadonlyArray<AgentNote>) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    for (const note of notes) {
      const until = note.limitedUntil === null ? Number.NaN : Date.parse(note.limitedUntil)
      if (until > now) yield* gate.report(note.agent, until)
    }
  })

/** Locks the change for this loop, telling of a lock taken over from a loop that is gone. */
const takeLock = (input: LoopRequest) =>
  Effect.gen(function*() {
    const lock = yield* LoopLock
    const reporter = yield* LoopReporter
    const previousOwner = yield* lock.acquire(input.change.id)
    if (Option.isSome(previousOwner)) {
      yield* reporter.warn(
        `took over the lock of a loop that is no longer running (pid ${previousOwner.value.pid}, started ${previousOwner.value.startedAt})`
      )
    }
  })

/** The work tree as the loop found it: the first iteration's start, and the owner's work its commits leave out. */
const lookAtWorkTree = (run: LoopRun) =>
  Effect.gen(function*() {
    const git = yield* GitSummary
    const reporter = yield* LoopReporter
    const { change, options } = run.input
    const { inputs, iterations } = run
    if (!git.repository) {
      return yield* reporter.warn(
        "not inside a git repository: iterations will not be summarized or committed, and the stall breaker cannot see file changes"
      )
    }
    const start = yield* inputs.gitOrWarn(git.snapshot, null)
    yield* Ref.set(iterations.lastSnapshot, start)
    const dirty = start === null ? [] : yield* inputs.gitOrWarn(git.dirtyPaths(start), [])
    yield* Ref.set(iterations.ownerWork, new Set(dirty))
    const tree = treeOf(change)
    const outside = dirty.filter((path) => !isTreePath(tree, path))
    if (options.commit && outside.length > 0) {
      yield* reporter.warn(
        `the work tree holds ${outside.length} uncommitted change${outside.length === 1 ? "" : "s"} outside ${tree.dir === ".spool" ? ".spool/" : `.spool/ and ${tree.dir}/`} ` +
          `(${listPaths(outside)}): spool commits only what each iteration changes and leaves ${outside.length === 1 ? "it" : "them"} out ` +
          "(to keep the loop apart from them, run it with --worktree)"
      )
    }
  })

/**
 * Prepares the run: what `--resume` goes on from, the input checked, the change locked, and only
 * then the state written; a run `--resume` finds complete runs nothing and writes nothing.
 */
export const startRun = (input: LoopRequest) =>
  Effect.gen(function*() {
    const history = yield* HistoryStore
    const reporter = yield* LoopReporter
    const checkpoint = yield* checkpointOf(input)
    const { change } = input
    // With --resume, the run goes on from the state it found (null: there was none, a new run starts).
    const { plan, state: last } = input.resume === true ? yield* readResumePlan(history, change.id) : { plan: fresh, state: null }
    if (plan._tag === "Done") {
      // Nothing runs and nothing is written: the run is over.
      const message = `complete: run ${plan.run} completed at iteration ${plan.iteration}; nothing to resume (without --resume a new run starts)`
      yield* reporter.line(message)
      const result: LoopResult = { run: plan.run, status: "complete", reason: "complete", iterations: plan.iteration, message, resumeAt: null }
      return { _tag: "Done", result } satisfies LoopStart
    }
    const gate = yield* Effect.flatMap(UsageLimitGate, (gates) => gates.forLoop(change.id))
    const agents = yield* loopAgents
    const inputs = yield* makeLoopInputs(change)
    yield* checkInput(input, inputs, agents)
    yield* takeLock(input)
    // A run taken up again (--resume, here or on another clone) keeps the limits its last sitting met.
    yield* keepLimits(gate, last?.agents ?? [])

    const resumed = plan._tag === "Continue" ? plan : null
    const run = yield* makeLoopRun(input, resumed, { gate, inputs, checkpoint, agents, last })
    yield* run.saveState({})
    if (resumed !== null) {
      const { spend } = resumed.counters
      yield* reporter.line(
        `resuming run ${run.runId} at iteration ${resumed.iteration} (so far: ${describeSpend(spend, resumed.elapsedMs)})`
      )
    }
    yield* lookAtWorkTree(run)
    return { _tag: "Started", run } satisfies LoopStart
  })
