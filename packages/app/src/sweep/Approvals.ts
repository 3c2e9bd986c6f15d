import { type ApprovalNote, type ChangeId, ContextStore, HistoryStore, type LoopState, mergeNoteOf, oneLine, Workspace } from "@spool/core"
import { GitApproval } from "@spool/git"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { Invocation } from "../host/Invocation.js"
import { onRemote } from "../list/Lists.js"
import { Reports } from "../report/Reports.js"
import { requestError } from "../RequestError.js"

/** A person's word on the merge of a change awaiting approval: approved, or rejected with why; on `remote` when given. */
export interface ApprovalRequest {
  readonly change: string
  readonly decision: "approved" | "rejected"
  /** Why it was rejected; null for an approval. */
  readonly why: string | null
  readonly remote: string | null
}

/** What the next prompt of a rejected change says, under the context a person added. */
export const rejectionContext = (why: string) => `A person reviewed the completed work and rejected its merge: ${why.trim()}`

/** The change's last run as `remote` has it (with the word on its merge kept there), else as here. */
const stateOf = (changeId: ChangeId, remote: string | null) =>
  remote === null
    ? Effect.flatMap(HistoryStore, (history) => history.readState(changeId))
    : onRemote(remote, () => Effect.flatMap(HistoryStore, (history) => history.readState(changeId)))

/** Why a change is not awaiting approval, said so that a person knows what to do instead. */
const notAwaiting = (state: LoopState | null) =>
  state === null
    ? "no loop has run on it"
    : state.status !== "complete"
    ? `its loop is ${state.status}`
    : state.approval?.decision === "approved"
    ? "it is approved already; the next --merge sweep merges it"
    : state.approval?.decision === "rejected"
    ? "it was rejected; the next sweep runs it again"
    : state.merge?.merged === true
    ? "it is merged already"
    : "its loop completed outside a --merge --approve sweep"

/** The remote's git, as a sweep or a person's decision writes the word on a merge there. */
const remoteOptions = (remote: string) => Effect.map(Effect.all([Workspace, Invocation]), ([workspace, invocation]) => ({ root: workspace.root, remote, env: invocation.env }))

/**
 * Records a person's word on the merge of a change awaiting approval: here, in its loop's state
 * (a rejection's why in its context too); with a remote, as the change's approval ref there, which
 * any clone's sweep reads. A change not awaiting approval is a request error.
 */
export const decide = (request: ApprovalRequest) =>
  Effect.gen(function*() {
    const flag = request.decision === "approved" ? "approve" : "reject"
    const change = yield* (yield* Workspace).resolveChange(request.change)
    const state = Option.getOrNull(yield* stateOf(change.id, request.remote))
    if (state === null || state.status !== "complete" || state.approval?.decision !== "awaiting") {
      return yield* requestError(
        `--${flag} ${change.id}: it is not awaiting approval (${notAwaiting(state)}); spool ralph --list${request.remote === null ? "" : ` --remote ${request.remote}`} shows the changes that are`,
        flag
      )
    }
    const note: ApprovalNote = {
      decision: request.decision,
      run: state.run,
      at: new Date(yield* Clock.currentTimeMillis).toISOString(),
      ...(request.why === null ? {} : { why: oneLine(request.why, 500) })
    }
    if (request.remote === null) {
      if (request.why !== null) yield* (yield* ContextStore).append(change.id, rejectionContext(request.why))
      yield* (yield* HistoryStore).writeState(change.id, { ...state, approval: note, merge: mergeNoteOf(note) })
    } else {
      yield* GitApproval.write(yield* remoteOptions(request.remote), change.id, note)
    }
    const where = request.remote === null ? "" : ` on ${request.remote}`
    return request.decision === "approved"
      ? `approved ${change.id}${where}: the next spool ralph --continue-ready --merge merges it without running it again`
      : `rejected ${change.id}${where}: its context has the reason, and the next sweep runs it again`
  })

/**
 * Keeps a change a `--merge --approve` sweep completed from its merge until a person approves it:
 * its state says it waits (and, with a remote, the approval ref there). A state that cannot be
 * written is warned of.
 */
export const awaitApproval = (changeId: string, remote: string | null) =>
  Effect.gen(function*() {
    const history = yield* HistoryStore
    const id = (yield* (yield* Workspace).resolveChange(changeId)).id
    const state = Option.getOrNull(yield* history.readState(id))
    if (state === null) return
    const note: ApprovalNote = { decision: "awaiting", run: state.run, at: new Date(yield* Clock.currentTimeMillis).toISOString() }
    yield* history.writeState(id, { ...state, approval: note, merge: mergeNoteOf(note) })
    if (remote !== null) yield* GitApproval.write(yield* remoteOptions(remote), id, note)
  }).pipe(
    Effect.catchAll((error) =>
      Effect.flatMap(Reports, (reports) => reports.warn(`${changeId}: could not record that it awaits approval: ${oneLine(error.message, 160)}`))
    )
  )

/** Once an approved change is merged, its word on the remote has done its part and goes. */
export const forgetApproval = (changeId: string, remote: string) =>
  Effect.flatMap(remoteOptions(remote), (options) => GitApproval.write(options, changeId, null)).pipe(
    Effect.catchAll((error) =>
      Effect.flatMap(Reports, (reports) => reports.warn(`${changeId}: merged, but its approval stays on ${remote}: ${oneLine(error.message, 160)}`))
    )
  )

/** Records people's words on merges (`--approve <change>`, `--reject <change> "<why>"`): the line to print is the result. */
export class Approvals extends Context.Tag("@spool/app/Approvals")<Approvals, {
  readonly decide: (request: ApprovalRequest) => Effect.Effect<string, Effect.Effect.Error<ReturnType<typeof decide>>>
}>() {
  static readonly layer = Layer.effect(
    Approvals,
    Effect.map(Effect.context<Effect.Effect.Context<ReturnType<typeof decide>>>(), (context) => ({
      decide: (request: ApprovalRequest) => decide(request).pipe(Effect.provide(context))
    }))
  )
}
