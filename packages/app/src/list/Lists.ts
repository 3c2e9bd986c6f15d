import {
  type ApprovalNote,
  type ChangeCandidate,
  type ChangeHolder,
  ContextStore,
  decideTake,
  ErrorJournal,
  HistoryStore,
  type LeaseView,
  listChanges,
  loadStatus,
  LoopLock,
  type LoopState,
  mergeNoteOf,
  taskCounts,
  type TreeShape,
  Workspace
} from "@spool/core"
import { GitRemoteHome, GitRemoteSnapshot, GitWorktree } from "@spool/git"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { realpathSync } from "node:fs"
import { sep } from "node:path"
import { Invocation } from "../host/Invocation.js"
import { RequestError } from "../RequestError.js"

/**
 * Every change directory that is not archived, as the sweep and `--list` weigh it: whether it has
 * its proposal, how its loop stands, its tasks; with its loop's state.
 */
export const changeCandidates = Effect.gen(function*() {
  const workspace = yield* Workspace
  return yield* Effect.forEach(yield* workspace.changeDirectories, ({ id, hasProposal }) =>
    Effect.map(loadStatus(id), ({ state, tasks }) => ({
      candidate: {
        id,
        archived: false,
        hasProposal,
        proposal: workspace.tree.proposal,
        loopStatus: state?.status ?? null,
        tasks: taskCounts(tasks),
        merge: state?.merge ?? null,
        approval: state?.approval?.decision ?? null
      } satisfies ChangeCandidate,
      state
    })))
})

/** Every change of the workspace, and who holds each (by its id). */
const gather = (holderOf: (changeId: string) => ChangeHolder | null) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const active = (yield* changeCandidates).map(({ candidate, state }) => ({
      candidate,
      lastRun: state === null
        ? null
        : { status: state.status, iteration: state.iteration, maxIterations: state.maxIterations, resumeAt: state.resumeAt },
      holder: holderOf(candidate.id)
    }))
    // An archived change is not ready whatever it holds: its proposal is not looked for.
    const archived = (yield* workspace.archivedChanges).map((id) => ({
      candidate: { id, archived: true, hasProposal: true, loopStatus: null, tasks: null, merge: null } satisfies ChangeCandidate,
      lastRun: null,
      holder: null
    }))
    return listChanges([...active, ...archived])
  })

/** The holder of a lease still live at `now`; an expired one holds nothing. */
const leaseHolder = (view: LeaseView | undefined, now: number): ChangeHolder | null => {
  if (view === undefined) return null
  const decision = decideTake(view, now)
  return decision._tag === "Busy" ? { name: `pid ${decision.lease.pid} on ${decision.lease.host}`, expiresAt: decision.lease.expiresAt } : null
}

/** The changes whose leases on the remote are held, as of `now`: their loops run somewhere. */
export const leasedChanges = (leases: ReadonlyMap<string, LeaseView>, now: number): ReadonlySet<string> =>
  new Set([...leases].filter(([, view]) => leaseHolder(view, now) !== null).map(([id]) => id))

/** Fails with a usage error unless the repository has a git remote named `remote`. */
export const requireRemote = (remote: string) =>
  Effect.flatMap(
    Effect.all([Workspace, Invocation]),
    ([workspace, invocation]) => GitRemoteHome.hasRemote({ root: workspace.root, remote, env: invocation.env })
  ).pipe(
    Effect.filterOrFail(
      (has) => has,
      () => new RequestError({ message: `--remote ${remote}: the repository has no remote of that name; add it with git remote add ${remote} <url>`, option: "remote" })
    ),
    Effect.asVoid
  )

/** Whether `worktree` is the change's worktree in the clone at `root` (or a directory in it), as this clone's loops make it. */
const isOwnWorktree = (root: string, changeId: string, worktree: string) =>
  [root, realPathOf(root)].some((base) => {
    const own = GitWorktree.directoryOf(base, changeId)
    return worktree === own || worktree.startsWith(own + sep)
  })

const realPathOf = (path: string) => {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

/**
 * The remote's loop states as this clone at `here` sees them: a worktree another clone recorded is
 * a path on that clone's machine, not here, and is left out (the work is on the change's branch);
 * a person's word on the merge of its last run, kept on the remote apart from the state, is in it.
 */
const statesSeenFrom = (here: string, approvals: ReadonlyMap<string, ApprovalNote>) =>
  Layer.effect(
    HistoryStore,
    Effect.map(HistoryStore, (store): HistoryStore["Type"] => ({
      ...store,
      readState: (changeId) =>
        Effect.map(store.readState(changeId), (found) =>
          Option.map(found, ({ worktree, ...state }) =>
            withApproval(worktree === undefined || !isOwnWorktree(here, changeId, worktree) ? state : { ...state, worktree }, approvals.get(changeId))))
    }))
  ).pipe(Layer.provide(HistoryStore.layer))

/** A completed run's state with the remote's word on its merge (one on another run says nothing of it). */
const withApproval = (state: LoopState, note: ApprovalNote | undefined): LoopState =>
  note === undefined || note.run !== state.run || state.status !== "complete" || state.merge?.merged === true
    ? state
    : { ...state, approval: note, merge: mergeNoteOf(note) }

/**
 * The stores of a workspace at `root` laid out as `tree`, for reading a snapshot of the remote as if
 * it were a repository, from the clone at `here`.
 */
const storesAt = (root: string, tree: TreeShape, here: string, approvals: ReadonlyMap<string, ApprovalNote>) =>
  Layer.mergeAll(ContextStore.layer, statesSeenFrom(here, approvals), ErrorJournal.layer).pipe(Layer.provideMerge(Workspace.layer(root, tree.layout)))

/**
 * Runs `read` against what `remote` holds: every change's branch, state and lease, fetched at once
 * into a directory laid out as the repository's tree, removed afterwards.
 */
export const onRemote = <A, E, R>(remote: string, read: (leases: ReadonlyMap<string, LeaseView>) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const { env } = yield* Invocation
    yield* requireRemote(remote)
    return yield* Effect.acquireUseRelease(
      GitRemoteSnapshot.snapshot({ root: workspace.root, remote, env, tree: workspace.tree }),
      (snapshot) => read(snapshot.leases).pipe(Effect.provide(storesAt(snapshot.root, workspace.tree, workspace.root, snapshot.approvals))),
      GitRemoteSnapshot.remove
    )
  })

/** The changes and their states: this repository's (holders from the locks of live loops here), or with `remote`, the remote's. */
export const changeList = (remote: string | null) =>
  Effect.gen(function*() {
    if (remote !== null) {
      return yield* onRemote(remote, (leases) => Effect.flatMap(Clock.currentTimeMillis, (now) => gather((id) => leaseHolder(leases.get(id), now))))
    }
    const live = yield* (yield* LoopLock).liveLoops
    return yield* gather((id) => {
      const loop = live.find((l) => l.changeId === id)
      return loop === undefined ? null : { name: `pid ${loop.owner.pid} on ${loop.owner.host}`, expiresAt: null }
    })
  })

/** Which changes to list: this repository's, or with `remote`, the ones that remote holds. */
export interface ListRequest {
  readonly remote: string | null
}

/** Lists a workspace's changes: each one's state, why it is (not) ready, who holds it, its tasks. */
export class Lists extends Context.Tag("@spool/app/Lists")<Lists, {
  readonly list: (request: ListRequest) => Effect.Effect<Effect.Effect.Success<ReturnType<typeof changeList>>, Effect.Effect.Error<ReturnType<typeof changeList>>>
}>() {
  static readonly layer = Layer.effect(
    Lists,
    Effect.map(Effect.context<Effect.Effect.Context<ReturnType<typeof changeList>>>(), (context) => ({
      list: (request: ListRequest) => changeList(request.remote).pipe(Effect.provide(context))
    }))
  )
}
