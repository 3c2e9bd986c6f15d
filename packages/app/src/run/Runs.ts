import {
  branchOf,
  type Change,
  CheckRunner,
  ContextStore,
  holdLease,
  leaseLayer,
  type LockIdentity,
  LoopEvents,
  LoopReporter,
  type LoopResult,
  makeRedactor,
  PromptBuilder,
  RemoteHome,
  runLoop,
  UsageLimitGate,
  Workspace
} from "@spool/core"
import { GitRemoteHome } from "@spool/git"
import { Context, Effect, Layer, Random, type Scope } from "effect"
import { Invocation } from "../host/Invocation.js"
import { lockIdentity } from "../host/Process.js"
import { requireRemote } from "../list/Lists.js"
import { secretEnv, withNotices } from "../notices/Notices.js"
import { gitLayer } from "../place/GitLayer.js"
import { sandboxNote, warnUnwalled, withinWalls } from "../sandbox/Walls.js"
import { afterLoop, placeLayer, workPlace } from "../place/WorkPlace.js"
import { loopReporter } from "../report/Reports.js"
import type { RemoteRequest, RunRequest } from "./LoopRequest.js"
import { type PreparedLoop, prepareLoop, preflight } from "./PreparedLoop.js"

/**
 * Takes the change's lease on `remote` for the scope and brings its branch and state from there:
 * a live holder elsewhere fails it (exit 73) before anything is written.
 */
const takeRemoteHome = (change: Change, remote: RemoteRequest, identity: LockIdentity) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const reporter = yield* LoopReporter
    yield* requireRemote(remote.name)
    const { env } = yield* Invocation
    // A git command against the remote that takes longer than a third of the lease's time (the
    // time between renewals), and at least a minute, counts as the remote not answering.
    const within = Math.max(60_000, Math.ceil(remote.leaseTtlMs / 3 / 1000) * 1000)
    const home = yield* GitRemoteHome.make({ root: workspace.root, remote: remote.name, env, within, stateDir: workspace.stateDir })
    const tag = (yield* Random.nextIntBetween(0, 36 ** 6)).toString(36).padStart(6, "0")
    const held = yield* holdLease(change.id, {
      ttlMs: remote.leaseTtlMs,
      identity: { holder: `${identity.host}/${identity.pid}/${tag}`, host: identity.host, pid: identity.pid },
      leftToExpire: (lease) =>
        reporter.warn(`the lease of ${change.id} on ${remote.name} is left to expire at ${lease.expiresAt}: the remote did not answer in time to give it up`)
    }).pipe(Effect.provideService(RemoteHome, home))
    if (held.over !== null) {
      yield* reporter.warn(
        `took over the lease of ${change.id} on ${remote.name} from pid ${held.over.pid} on ${held.over.host}, which expired at ${held.over.expiresAt} unrenewed`
      )
    }
    yield* workspace.ensureStateDir(change.id)
    const pulled = yield* home.pull(change.id)
    for (const note of pulled.notes) yield* reporter.warn(note)
    yield* reporter.line(
      pulled.branch
        ? `on ${remote.name}: branch ${branchOf(change.id)}${pulled.state ? " and the loop's state" : ""} fetched; the lease is this loop's`
        : `on ${remote.name}: no branch ${branchOf(change.id)} yet, it starts from the current branch; the lease is this loop's`
    )
    return held
  })

/**
 * Runs the loop on `change` as `prepared` says: how it ended is the result. The loop's events and
 * usage-limit gate come from the caller (one loop's own, or a sweep's shared ones). `context`: a
 * line added to the change's context once its state is here (after the remote's is brought).
 */
export const runPrepared = (prepared: PreparedLoop, change: Change, context: string | null = null) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const { options, request } = prepared
    const identity = lockIdentity(invocation.pid)
    const loop = Effect.gen(function*() {
      // An agent that cannot start must not leave a new worktree behind, nor take a lease.
      if (prepared.worktree) yield* preflight(prepared)
      // With a remote: the lease first (another machine's live one: exit 73, nothing touched), then the remote's branch and state.
      const lease = prepared.remote === null ? null : yield* takeRemoteHome(change, prepared.remote, identity)
      if (context !== null) yield* (yield* ContextStore).append(change.id, context)
      const place = yield* workPlace(change, { worktree: prepared.worktree, commits: options.commit })
      const lock = placeLayer(place, identity)
      const result = yield* runLoop({
        change: place.change,
        userPrompt: prepared.userPrompt,
        options,
        cwd: place.cwd,
        worktree: place.worktree,
        pid: invocation.pid,
        redact: makeRedactor(secretEnv(invocation.env, prepared.secrets)),
        settings: request.settings,
        ...(prepared.walls === null ? {} : { sandbox: sandboxNote(prepared.walls, [...prepared.agents, ...prepared.reviewers], invocation.env) }),
        resume: request.resume,
        deadline: request.deadline
      }).pipe(
        Effect.provide(Layer.merge(lease === null ? lock : leaseLayer(lease).pipe(Layer.provide(lock)), gitLayer(place.cwd))),
        // Behind the sandbox's walls, the agent and the checks of this place, and no other, run.
        withinWalls(prepared.walls, prepared, place)
      )
      if (prepared.merged !== true || result.status !== "complete") {
        yield* afterLoop(place, result.status === "complete", prepared.remote?.name ?? null)
      }
      return result
    }).pipe(Effect.scoped)
    return yield* loop.pipe(
      Effect.provide(Layer.mergeAll(PromptBuilder.layer, loopReporter(change.id), CheckRunner.layer))
    )
  })

/** What a run is wrapped in once its request is checked (a dashboard served beside it), or nothing. */
export type Around<A, E, E2, R2> = (effect: Effect.Effect<A, E>) => Effect.Effect<A, E | E2, R2>

/** One loop on one change, as `request` asks: how it ended is the result. */
const runRequest = (request: RunRequest) =>
  Effect.gen(function*() {
    const change = yield* (yield* Workspace).resolveChange(request.change)
    const prepared = yield* prepareLoop(request)
    if (request.remote !== null) yield* warnUnwalled(request, `this loop on ${request.remote.name}`)
    return { prepared, run: withNotices(prepared.notify, runPrepared(prepared, change)) }
  })

type RunNeeds = Effect.Effect.Context<ReturnType<typeof runRequest>> | Effect.Effect.Context<Effect.Effect.Success<ReturnType<typeof runRequest>>["run"]>
type RunError = Effect.Effect.Error<ReturnType<typeof runRequest>> | Effect.Effect.Error<Effect.Effect.Success<ReturnType<typeof runRequest>>["run"]>

/** Runs one loop on one change at a time, each with its own events and usage-limit gate. */
export class Runs extends Context.Tag("@spool/app/Runs")<Runs, {
  /**
   * Checks `request` (its change, agent, remote and notices), then runs its loop, `around` what
   * the caller wraps it in: how the loop ended is the result.
   */
  readonly run: <E2 = never, R2 = never>(
    request: RunRequest,
    around?: Around<LoopResult, RunError, E2, R2>
  ) => Effect.Effect<LoopResult, RunError | E2, R2>
}>() {
  static readonly layer = Layer.effect(
    Runs,
    Effect.map(Effect.context<Exclude<RunNeeds, LoopEvents | UsageLimitGate | Scope.Scope>>(), (context) => ({
      run: <E2 = never, R2 = never>(request: RunRequest, around?: Around<LoopResult, RunError, E2, R2>) =>
        // Scoped: what the request starts for its run (the sandbox) ends with it.
        Effect.scoped(Effect.flatMap(runRequest(request), ({ run }) => {
          const checked = run.pipe(Effect.provide(Layer.merge(LoopEvents.layer, UsageLimitGate.layerPerLoop)), Effect.provide(context))
          return around === undefined ? checked : around(checked)
        })).pipe(Effect.provide(context))
    }))
  )
}
