import type { ApprovalNote, LoopStatus, MergeNote } from "../domain/Domain.js"
import { moduleIdOf } from "../domain/Domain.js"
import { doneTasks, type TaskCounts } from "../text/Figures.js"

/** What a sweep knows of a change before it runs: enough to tell whether it is ready. */
export interface ChangeCandidate {
  readonly id: string
  /** Under `changes/archive/`: done and put away. */
  readonly archived: boolean
  readonly hasProposal: boolean
  /** The tree's proposal document, which a change without one is told to lack (`proposal.md` unless said; spec-kit's `spec.md`). */
  readonly proposal?: string
  /** How its last loop ended or stands (null: no loop ran on it yet). */
  readonly loopStatus: LoopStatus | null
  /** Its `tasks.md`'s tasks (null: it has none, or none a task list counts). */
  readonly tasks: TaskCounts | null
  /** What became of its last run's merge, when a `--merge` sweep completed it (null: none was asked for). */
  readonly merge: MergeNote | null
  /** A person's word on its last run's merge, when a `--merge --approve` sweep asked for one (absent or null: none). */
  readonly approval?: ApprovalNote["decision"] | null
}

export type Readiness =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Complete"; readonly why: "its loop completed" | "every task is done" }
  /** Its loop completed in a `--merge` sweep, and the work is not home: a `--merge` sweep tries the merge again. */
  | { readonly _tag: "Unmerged"; readonly why: string }
  /** Its loop completed in a `--merge --approve` sweep, and no person has approved or rejected its merge yet. */
  | { readonly _tag: "AwaitingApproval"; readonly why: "awaiting approval" }
  | { readonly _tag: "NotReady"; readonly why: "archived" | `no ${string}` }

/**
 * A change is ready when it is active, has a proposal, its own loop has not completed, and its
 * task list, when it has tasks, still has open ones. A tasks.md with no task in it (a template) says
 * nothing either way. A completed loop whose merge was not made leaves the change unmerged (why: the
 * merge's words); one whose merge waits for a person is awaiting approval, and one a person rejected
 * is ready again, whatever its tasks say, as is one whose reviewers (`--review`) turned it down: its
 * tasks may all be ticked, but its work is not done.
 */
export const readiness = (change: ChangeCandidate): Readiness =>
  change.archived
    ? { _tag: "NotReady", why: "archived" }
    : !change.hasProposal
    ? { _tag: "NotReady", why: `no ${change.proposal ?? "proposal.md"}` }
    : (change.loopStatus === "complete" && change.approval === "rejected") || change.loopStatus === "review-rejected"
    ? { _tag: "Ready" }
    : change.loopStatus === "complete" && change.approval === "awaiting"
    ? { _tag: "AwaitingApproval", why: "awaiting approval" }
    : change.loopStatus === "complete"
    ? change.merge !== null && !change.merge.merged ? { _tag: "Unmerged", why: change.merge.text } : { _tag: "Complete", why: "its loop completed" }
    : change.tasks !== null && change.tasks.total > 0 && doneTasks(change.tasks) === change.tasks.total
    ? { _tag: "Complete", why: "every task is done" }
    : { _tag: "Ready" }

/** Which changes a sweep takes: every ready one, a module's, or the ones named (in the order named). */
export type SweepSelection =
  | { readonly _tag: "AllReady" }
  | { readonly _tag: "Module"; readonly moduleId: string }
  | { readonly _tag: "Named"; readonly ids: ReadonlyArray<string> }

// Change ids are directory names, so no two are equal.
const byId = (a: ChangeCandidate, b: ChangeCandidate) => (a.id < b.id ? -1 : 1)

/**
 * The changes a sweep goes through, in its order: change-id order, or the order given for named
 * changes (each once). Archived changes are never taken; the rest keep their readiness, so the
 * sweep can list a complete one as such.
 */
export const sweepChanges = (
  candidates: ReadonlyArray<ChangeCandidate>,
  selection: SweepSelection
): ReadonlyArray<{ readonly change: ChangeCandidate; readonly readiness: Readiness }> => {
  const active = candidates.filter((change) => !change.archived)
  const chosen = selection._tag === "Named"
    ? [...new Set(selection.ids)].flatMap((id) => active.filter((change) => change.id === id))
    : active.filter((change) => selection._tag === "AllReady" || moduleIdOf(change.id) === selection.moduleId).sort(byId)
  return chosen.map((change) => ({ change, readiness: readiness(change) }))
}

/**
 * How a change's part in a sweep ended: its loop's ending, or why it did not run (`busy`: another
 * loop holds it; `already-complete`; `not-started`: the sweep stopped first).
 */
export type SweepOutcome =
  | Exclude<LoopStatus, "running" | "waiting">
  | "busy"
  | "already-complete"
  | "not-started"

/**
 * What the sweep's own ending says: every change it ran completed (and, with `--merge`, was
 * merged), or the ending that matters most.
 */
export type SweepEnding =
  | "complete"
  | "failed"
  | "not-merged"
  | "review-rejected"
  | "stopped"
  | "max-iterations"
  | "usage-limit"
  | "deadline"
  | "awaiting-approval"
  | "interrupted"

/**
 * Whether the sweep succeeded: only when every change it ran completed (a change skipped as busy or
 * already complete does not count against it) and none of them was left unmerged. Otherwise the
 * ending a person must act on first: an interruption, then a failure, a change left unmerged, a
 * change its reviewers turned down, a guard's stop, `--max-iterations`, a usage limit, `--deadline`
 * (those two only ask to run again later), and last a change awaiting a person's approval
 * (`--approve`): all else is done, and the work waits for a person only.
 */
export const sweepEnding = (outcomes: ReadonlyArray<SweepOutcome>, unmerged = 0, awaiting = 0): SweepEnding => {
  if (outcomes.includes("interrupted")) return "interrupted"
  if (outcomes.includes("failed")) return "failed"
  if (unmerged > 0) return "not-merged"
  for (const ending of ["review-rejected", "stopped", "max-iterations", "usage-limit", "deadline"] as const) {
    if (outcomes.includes(ending)) return ending
  }
  return awaiting > 0 ? "awaiting-approval" : "complete"
}
