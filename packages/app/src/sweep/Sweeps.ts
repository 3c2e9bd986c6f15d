import {
  CheckRunner,
  GitSummary,
  HistoryStore,
  LockError,
  LoopEvents,
  LoopLock,
  loopSummary,
  Merges,
  reviewSpend,
  type RunFacts,
  runSweep,
  type SweepReport,
  sweepChanges,
  sweepNotice,
  approvalNotice,
  type SweepRunner,
  type SweepSelection,
  UsageLimitGate,
  Workspace
} from "@spool/core"
import { Path } from "@effect/platform"
import { Context, Effect, Layer, Option, Ref, type Scope } from "effect"
import { changeCandidates, onRemote } from "../list/Lists.js"
import { withNotices } from "../notices/Notices.js"
import { gitLayer } from "../place/GitLayer.js"
import { Reports } from "../report/Reports.js"
import { requestError } from "../RequestError.js"
import type { Around } from "../run/Runs.js"
import { runPrepared } from "../run/Runs.js"
import { type PreparedLoop, prepareLoop, preflight } from "../run/PreparedLoop.js"
import { warnUnwalled } from "../sandbox/Walls.js"
import { awaitApproval, forgetApproval, rejectionContext } from "./Approvals.js"
import { awaitingMerge, fetchBranch, mergeChange, rememberMerge } from "./SweepMerge.js"
import type { SweepRequest, SweepTarget } from "./SweepRequest.js"
import { sweepSummary } from "./SweepSummary.js"

/** The changes the sweep takes, checked against the workspace: named ones resolved, each of the module asked for. */
const selectionOf = (target: SweepTarget) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const moduleId = target._tag === "AllReady" ? null : target.moduleId
    if (moduleId !== null && workspace.tree.modulesDir === null) {
      return yield* requestError(`--module: a ${workspace.tree.title} tree has no modules; name the change with --change`, "module")
    }
    if (target._tag !== "Named") return target._tag === "Module" ? { _tag: "Module", moduleId: target.moduleId } satisfies SweepSelection : target
    const named = yield* Effect.forEach(target.changes, (input) => workspace.resolveChange(input))
    const outside = moduleId !== null ? named.filter((change) => change.moduleId !== moduleId) : []
    if (outside.length > 0) {
      return yield* requestError(`change ${outside[0]!.id} belongs to module ${outside[0]!.moduleId ?? "(none)"}, not ${moduleId}; drop --module or that --change`, "module")
    }
    return { _tag: "Named", ids: named.map((change) => change.id) } satisfies SweepSelection
  })

/**
 * What the sweep knows of each change: its proposal, its loop's state and its tasks, as `--status`
 * reads them; and why a person rejected the merge of each change rejected so.
 */
const candidates = Effect.map(changeCandidates, (changes) => ({
  known: changes.map(({ candidate }) => candidate),
  rejected: new Map<string, string>(changes.flatMap(({ candidate, state }) =>
    candidate.approval === "rejected" && state?.approval?.why !== undefined ? [[candidate.id, state.approval.why] as const] : []))
}))

const noFacts: RunFacts = { iterations: 0, costUsd: null, tokens: null, branch: null, lastCommit: null, agents: [] }

/** What a change's last run left, from its state and its records: the summary of that run's iterations. */
const factsOf = (changeId: string) =>
  Effect.gen(function*() {
    const history = yield* HistoryStore
    const workspace = yield* Workspace
    const id = (yield* workspace.resolveChange(changeId)).id
    const state = Option.getOrNull(yield* history.readState(id))
    if (state === null) return noFacts
    const records = (yield* history.recent(id, Math.max(1, state.iteration))).records.filter((record) => record.run === state.run)
    const run = loopSummary({ changeId: id, state, history: records, tasks: { tasks: [] } })
    const reviews = reviewSpend(records)
    return {
      iterations: run.iteration,
      costUsd: run.usage?.cost ?? null,
      tokens: run.usage?.tokens ?? null,
      ...(reviews === null ? {} : { reviews }),
      branch: run.branch,
      lastCommit: run.lastCommit,
      agents: run.agents
    } satisfies RunFacts
  }).pipe(Effect.orElseSucceed(() => noFacts))

/** Fails as a lock would when another loop already runs on the change, before anything of it is touched. */
const notBusy = (changeId: string) =>
  Effect.gen(function*() {
    const live = (yield* (yield* LoopLock).liveLoops).find((loop) => loop.changeId === changeId)
    if (live === undefined) return
    const workspace = yield* Workspace
    const path = yield* Path.Path
    return yield* new LockError({ changeId, owner: live.owner, path: path.join(workspace.stateDir(live.changeId), "lock") })
  })

/** What running, reading and merging the sweep's changes take from the application's layers. */
type SweepNeeds =
  | Effect.Effect.Context<ReturnType<typeof runPrepared>>
  | Effect.Effect.Context<ReturnType<typeof factsOf>>
  | Effect.Effect.Context<ReturnType<ReturnType<typeof mergeChange>>>
  | Effect.Effect.Context<ReturnType<typeof fetchBranch>>
  | Effect.Effect.Context<ReturnType<typeof awaitApproval>>

/**
 * A sweep as `request` asks: checks it, says what it takes, runs the ready changes (merging each
 * once complete, when asked), and prints its summary however it ends; `around` wraps it once checked.
 */
const sweepRequest = (request: SweepRequest) =>
  Effect.gen(function*() {
    const selection = yield* selectionOf(request.selection)
    const { maxParallel, merge } = request
    const root = (yield* Workspace).root
    if (maxParallel > 1 && !(yield* Effect.map(GitSummary, (git) => git.repository).pipe(Effect.provide(gitLayer(root))))) {
      return yield* requestError(
        `--max-parallel ${maxParallel} runs each loop in a git worktree of its own, and ${root} is not inside a git repository; run git init and commit, or sweep one change at a time (--max-parallel 1)`,
        "max-parallel"
      )
    }
    const prepared0 = yield* prepareLoop(request)
    // An agent that cannot start is the sweep's failure, said once, before any change is touched.
    yield* preflight(prepared0)
    yield* warnUnwalled(request, "this sweep")
    // Loops side by side, or brought home by a merge, each work in a worktree of their own.
    const prepared: PreparedLoop = { ...prepared0, worktree: prepared0.worktree || maxParallel > 1 || merge }
    const workspace = yield* Workspace
    const base = merge ? yield* (yield* Merges).currentBranch(workspace.root) : null
    if (merge && base === null) {
      return yield* requestError("--merge brings the work into the branch checked out here, and none is (not a git repository, or a detached HEAD); check out a branch first", "merge")
    }
    return { prepared, selection, base }
  })

/** Runs the checked sweep; the report is the result. */
const runChecked = (request: SweepRequest, { prepared, selection, base }: Effect.Effect.Success<ReturnType<typeof sweepRequest>>) =>
  Effect.gen(function*() {
    const { maxParallel, merge } = request
    const workspace = yield* Workspace
    // With a remote, what is ready is what the remote says: a change complete there is not swept again.
    const remote = prepared.remote?.name ?? null
    const { known, rejected } = remote === null ? yield* candidates : yield* onRemote(remote, () => candidates)
    const changes = sweepChanges(known, selection)
    const reports = yield* Reports
    const ready = changes.filter((c) => c.readiness._tag === "Ready").map((c) => c.change.id)
    const unmerged = merge ? changes.filter((c) => c.readiness._tag === "Unmerged").map((c) => c.change.id) : []
    const awaiting = merge ? changes.filter((c) => c.readiness._tag === "AwaitingApproval").map((c) => c.change.id) : []
    yield* reports.print(
      changes.length === 0
        ? "no change to sweep: no active change matches"
        : `sweeping ${ready.length} ready change${ready.length === 1 ? "" : "s"}${maxParallel > 1 ? `, ${maxParallel} at a time` : ""}` +
          `${ready.length === 0 ? "" : `: ${ready.join(", ")}`}` +
          `${unmerged.length === 0 ? "" : `; merging again, complete but not merged: ${unmerged.join(", ")}`}` +
          `${awaiting.length === 0 ? "" : `; awaiting approval: ${awaiting.join(", ")}`}` +
          `${merge ? `; each merged into ${base} once complete${request.approve === true ? " and approved (spool ralph --approve <change>)" : ""}` : ""}`
    )
    const started = yield* Ref.make(0)
    const runChange = (changeId: string) =>
      Effect.gen(function*() {
        yield* notBusy(changeId)
        const n = yield* Ref.updateAndGet(started, (k) => k + 1)
        yield* reports.print(`=== sweep: ${changeId} (${n} of ${ready.length}) ===`)
        // A rejection kept on the remote reaches the change's context once its state is here.
        const why = remote === null ? undefined : rejected.get(changeId)
        const result = yield* runPrepared({ ...prepared, merged: merge }, yield* workspace.resolveChange(changeId), why === undefined ? null : rejectionContext(why))
        // Not merged until its merge is made: a sweep that ends first leaves that said, for the next to merge it.
        if (base !== null && result.status === "complete") yield* rememberMerge(changeId, awaitingMerge)
        return result
      })
    // With a remote, a change completed elsewhere is merged from the remote's branch; once merged, a
    // person's word on it there goes: the approval it was merged on, or the rejection its run answered.
    const mergeOne = base === null ? null : (changeId: string) =>
      Effect.gen(function*() {
        const unfetched = remote !== null && unmerged.includes(changeId) ? yield* fetchBranch(changeId, remote) : null
        if (unfetched !== null) return yield* Effect.as(rememberMerge(changeId, unfetched), unfetched)
        const note = yield* mergeChange(prepared, base)(changeId)
        if (remote !== null && note.merged && (unmerged.includes(changeId) || rejected.has(changeId))) yield* forgetApproval(changeId, remote)
        return note
      })
    const runner: SweepRunner<Effect.Effect.Error<ReturnType<typeof runChange>>, SweepNeeds> = {
      runChange,
      facts: factsOf,
      merge: mergeOne,
      awaitApproval: merge && request.approve === true ? (changeId) => awaitApproval(changeId, remote) : null
    }
    // The report, kept for the notice of the sweep's end, which is told after its loops' own.
    const ended = yield* Ref.make<SweepReport | null>(null)
    const printReport = (report: SweepReport) =>
      Effect.zipRight(Ref.set(ended, report), reports.print(sweepSummary(report, { merge: base }).join("\n")))
    // Told once, by the sweep whose change came to wait, before the sweep's end.
    const endNotices = (report: SweepReport) => [
      ...report.rows.filter((row) => row.awaitingApproval === true && row.outcome === "complete").map((row) => approvalNotice(row, base ?? "")),
      sweepNotice(report)
    ]
    const plan = { changes: changes.map((c) => ({ id: c.change.id, readiness: c.readiness })), concurrency: maxParallel }
    // Loops side by side: every line of theirs carries its change, from the sweep's start to its end.
    const sideBySide = maxParallel > 1 ? reports.sideBySide(ready) : Effect.void
    const swept = Effect.scoped(Effect.zipRight(sideBySide, runSweep(plan, runner, printReport)))
    return yield* withNotices(prepared.notify, swept, Effect.map(Ref.get(ended), (report) => (report === null ? [] : endNotices(report))))
  }).pipe(
    // One account: a usage limit one loop meets holds every loop of the sweep.
    Effect.provide(Layer.mergeAll(LoopEvents.layer, UsageLimitGate.layerShared, CheckRunner.layer))
  )

type Checked = Effect.Effect.Success<ReturnType<typeof sweepRequest>>
type SweepContext =
  | Effect.Effect.Context<ReturnType<typeof sweepRequest>>
  | Effect.Effect.Context<ReturnType<typeof runChecked>>
type SweepError =
  | Effect.Effect.Error<ReturnType<typeof sweepRequest>>
  | Effect.Effect.Error<ReturnType<typeof runChecked>>

/** Runs sweeps: the ready changes of a workspace (all, a module's, or named ones), one or several at a time. */
export class Sweeps extends Context.Tag("@spool/app/Sweeps")<Sweeps, {
  /** Checks `request`, then runs the sweep `around` what the caller wraps it in: its report is the result. */
  readonly run: <E2 = never, R2 = never>(
    request: SweepRequest,
    around?: Around<SweepReport, SweepError, E2, R2>
  ) => Effect.Effect<SweepReport, SweepError | E2, R2>
}>() {
  static readonly layer = Layer.effect(
    Sweeps,
    Effect.map(Effect.context<Exclude<SweepContext, Scope.Scope>>(), (context) => ({
      run: <E2 = never, R2 = never>(request: SweepRequest, around?: Around<SweepReport, SweepError, E2, R2>) =>
        // Scoped: what the request starts for its sweep (the sandbox) ends with it.
        Effect.scoped(Effect.flatMap(sweepRequest(request), (checked: Checked) => {
          const sweep = runChecked(request, checked).pipe(Effect.provide(context))
          return around === undefined ? sweep : around(sweep)
        })).pipe(Effect.provide(context))
    }))
  )
}
