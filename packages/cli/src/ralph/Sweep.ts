import {
  CheckRunner,
  GitSummary,
  HarnessService,
  HistoryStore,
  LockError,
  LoopEvents,
  LoopLock,
  Merges,
  type RunFacts,
  runSweep,
  type SweepReport,
  sweepChanges,
  sweepNotice,
  type SweepRunner,
  type SweepSelection,
  UsageLimitGate,
  usageTotals,
  Workspace
} from "@spool/core"
import { Path } from "@effect/platform"
import { Effect, Layer, Option, Ref } from "effect"
import { gitLayer } from "../Git.js"
import { TerminalReporter } from "../TerminalReporter.js"
import { UsageError } from "../UsageError.js"
import { wholeNumber } from "./GuardOptions.js"
import { changeCandidates, onRemote } from "./List.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "./Options.js"
import { type Beside, withDashboard } from "../serve/ServeMode.js"
import { withNotices } from "./Notify.js"
import { type PreparedLoop, prepareLoop, runPrepared } from "./Run.js"
import { refuseModuleWithout } from "./Targeting.js"
import { awaitingMerge, mergeChange, rememberMerge } from "./SweepMerge.js"
import { sweepSummary } from "./SweepSummary.js"

const usage = (message: string) => new UsageError({ message })

/** The command line asks for a sweep: every ready change, a module's, several changes, or a merge. */
export const isSweep = (args: RalphArgs) => args.continueReady || args.continueModule || args.changes.length > 1 || args.merge

/** Which changes the sweep takes, from the command line; every mistake is a usage error before anything runs. */
const selectionOf = (args: RalphArgs) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    yield* refuseModuleWithout(args)
    const moduleId = Option.map(args.module, (m) => m.trim().replace(/_.*$/, ""))
    if (Option.isSome(moduleId) && !/^\d+$/.test(moduleId.value)) {
      return yield* usage(`invalid module id '${Option.getOrThrow(args.module)}': use the module's number, e.g. --module 002`)
    }
    if (args.continueModule && Option.isNone(moduleId)) {
      return yield* usage("--continue-module goes with --module: spool ralph --module 002 --continue-module")
    }
    const sweepsAll = args.continueReady || args.continueModule
    if (sweepsAll && args.changes.length > 0) {
      const flag = args.continueReady ? "--continue-ready" : "--continue-module"
      return yield* usage(`${flag} takes every ready change; give it without --change, or name the changes with --change, once each`)
    }
    if (sweepsAll) {
      return Option.isSome(moduleId) ? { _tag: "Module", moduleId: moduleId.value } satisfies SweepSelection : { _tag: "AllReady" } satisfies SweepSelection
    }
    const named = yield* Effect.forEach(args.changes, (input) => workspace.resolveChange(input))
    const outside = Option.isSome(moduleId) ? named.filter((change) => change.moduleId !== moduleId.value) : []
    if (outside.length > 0) {
      return yield* usage(`change ${outside[0]!.id} belongs to module ${outside[0]!.moduleId ?? "(none)"}, not ${Option.getOrThrow(moduleId)}; drop --module or that --change`)
    }
    return { _tag: "Named", ids: named.map((change) => change.id) } satisfies SweepSelection
  })

/** What the sweep knows of each change: its proposal, its loop's state and its tasks, as `--status` reads them. */
const candidates = Effect.map(changeCandidates, (changes) => changes.map(({ candidate }) => candidate))

/** What a change's last run left, from its state and its records. */
const factsOf = (changeId: string) =>
  Effect.gen(function*() {
    const history = yield* HistoryStore
    const workspace = yield* Workspace
    const id = (yield* workspace.resolveChange(changeId)).id
    const state = Option.getOrNull(yield* history.readState(id))
    if (state === null) return { iterations: 0, costUsd: null, tokens: null, branch: null, lastCommit: null } satisfies RunFacts
    const records = (yield* history.recent(id, Math.max(1, state.iteration))).records.filter((record) => record.run === state.run)
    const totals = usageTotals(records)
    return {
      iterations: state.iteration,
      costUsd: totals?.cost ?? null,
      tokens: totals?.tokens ?? null,
      branch: state.branch ?? null,
      lastCommit: [...records].reverse().find((record) => record.commit !== null)?.commit ?? null
    } satisfies RunFacts
  }).pipe(Effect.orElseSucceed((): RunFacts => ({ iterations: 0, costUsd: null, tokens: null, branch: null, lastCommit: null })))

/** Fails as a lock would when another loop already runs on the change, before anything of it is touched. */
const notBusy = (changeId: string) =>
  Effect.gen(function*() {
    const live = (yield* (yield* LoopLock).liveLoops).find((loop) => loop.changeId === changeId)
    if (live === undefined) return
    const workspace = yield* Workspace
    const path = yield* Path.Path
    return yield* new LockError({ changeId, owner: live.owner, path: path.join(workspace.stateDir(live.changeId), "lock") })
  })

/** What running, reading and merging the sweep's changes take from the command's layers. */
type SweepNeeds =
  | Effect.Effect.Context<ReturnType<typeof runPrepared>>
  | Effect.Effect.Context<ReturnType<typeof factsOf>>
  | Effect.Effect.Context<ReturnType<ReturnType<typeof mergeChange>>>

/**
 * `spool ralph --continue-ready` (or `--continue-module`, several `--change`, `--merge`): runs the
 * ready changes as one sweep and prints its summary, however it ends; once its options are checked,
 * `beside` what the command line asks for (the dashboard of `--serve`).
 */
export const sweep = (args: RalphArgs, beside: Beside = withDashboard(null)) =>
  Effect.gen(function*() {
    const modes = [args.status, args.list, Option.isSome(args.addContext), args.clearContext, args.remove].filter(Boolean)
    if (modes.length > 0) {
      return yield* usage("a sweep (--continue-ready, --continue-module, several --change, --merge) runs loops; give --status, --list, --add-context, --clear-context and --remove without it")
    }
    const selection = yield* selectionOf(args)
    const maxParallel = yield* wholeNumber(specs.maxParallel, args.maxParallel, 1)
    const root = (yield* Workspace).root
    if (maxParallel > 1 && !(yield* Effect.map(GitSummary, (git) => git.repository).pipe(Effect.provide(gitLayer(root))))) {
      return yield* usage(
        `--max-parallel ${maxParallel} runs each loop in a git worktree of its own, and ${root} is not inside a git repository; run git init and commit, or sweep one change at a time (--max-parallel 1)`
      )
    }
    const prepared0 = yield* prepareLoop(args)
    // An agent that cannot start is the sweep's failure, said once, before any change is touched.
    yield* Effect.flatMap(HarnessService, (agent) => agent.preflight).pipe(Effect.provide(prepared0.harness))
    // Loops side by side, or brought home by a merge, each work in a worktree of their own.
    const prepared: PreparedLoop = { ...prepared0, worktree: prepared0.worktree || maxParallel > 1 || args.merge }
    const workspace = yield* Workspace
    const base = args.merge ? yield* (yield* Merges).currentBranch(workspace.root) : null
    if (args.merge && base === null) {
      return yield* usage("--merge brings the work into the branch checked out here, and none is (not a git repository, or a detached HEAD); check out a branch first")
    }
    // With --remote, what is ready is what the remote says: a change complete there is not swept again.
    const known = prepared.remote === null ? yield* candidates : yield* onRemote(prepared.remote.name, () => candidates)
    const changes = sweepChanges(known, selection)
    const terminal = yield* TerminalReporter
    const ready = changes.filter((c) => c.readiness._tag === "Ready").map((c) => c.change.id)
    const unmerged = args.merge ? changes.filter((c) => c.readiness._tag === "Unmerged").map((c) => c.change.id) : []
    yield* terminal.print(
      changes.length === 0
        ? "no change to sweep: no active change matches"
        : `sweeping ${ready.length} ready change${ready.length === 1 ? "" : "s"}${maxParallel > 1 ? `, ${maxParallel} at a time` : ""}` +
          `${ready.length === 0 ? "" : `: ${ready.join(", ")}`}` +
          `${unmerged.length === 0 ? "" : `; merging again, complete but not merged: ${unmerged.join(", ")}`}` +
          `${args.merge ? `; each merged into ${base} once complete` : ""}`
    )
    const started = yield* Ref.make(0)
    const runChange = (changeId: string) =>
      Effect.gen(function*() {
        yield* notBusy(changeId)
        const n = yield* Ref.updateAndGet(started, (k) => k + 1)
        yield* terminal.print(`=== sweep: ${changeId} (${n} of ${ready.length}) ===`)
        const result = yield* runPrepared({ ...prepared, merged: args.merge }, yield* workspace.resolveChange(changeId))
        // Not merged until its merge is made: a sweep that ends first leaves that said, for the next to merge it.
        if (base !== null && result.status === "complete") yield* rememberMerge(changeId, awaitingMerge)
        return result
      })
    const runner: SweepRunner<Effect.Effect.Error<ReturnType<typeof runChange>>, SweepNeeds> = {
      runChange,
      facts: factsOf,
      merge: base === null ? null : mergeChange(prepared, base)
    }
    // The report, kept for the notice of the sweep's end, which is told after its loops' own.
    const ended = yield* Ref.make<SweepReport | null>(null)
    const printReport = (report: SweepReport) =>
      Effect.zipRight(Ref.set(ended, report), terminal.print(sweepSummary(report, { merge: base }).join("\n")))
    const plan = { changes: changes.map((c) => ({ id: c.change.id, readiness: c.readiness })), concurrency: maxParallel }
    // Loops side by side: every line of theirs carries its change, from the sweep's start to its end.
    const sideBySide = maxParallel > 1 ? terminal.sideBySide(ready) : Effect.void
    const swept = Effect.scoped(Effect.zipRight(sideBySide, runSweep(plan, runner, printReport)))
    return yield* beside(withNotices(prepared.notify, swept, Effect.map(Ref.get(ended), (report) => (report === null ? [] : [sweepNotice(report)]))))
  }).pipe(
    // One account: a usage limit one loop meets holds every loop of the sweep.
    Effect.provide(Layer.mergeAll(LoopEvents.layer, UsageLimitGate.layerShared, CheckRunner.layer))
  )
