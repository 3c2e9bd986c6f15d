import type { ApprovalNote, LoopStatus, MergeNote } from "../domain/Domain.js"
import { type TasksDone, tasksDone } from "../text/Figures.js"
import { type ChangeCandidate, readiness } from "./SweepPolicy.js"

/** Who works on a change now: a live loop's lock on this machine, or a live lease on the remote. */
export interface ChangeHolder {
  /** `pid 4242 on ci-7` */
  readonly name: string
  /** When its lease lapses unless renewed (ISO); null for a lock, which lasts as long as its loop. */
  readonly expiresAt: string | null
}

/** What `--list` knows of a change: the sweep's candidate, its last run, who holds it. */
export interface ListInput {
  readonly candidate: ChangeCandidate
  readonly lastRun: { readonly status: LoopStatus; readonly iteration: number; readonly maxIterations: number; readonly resumeAt: string | null } | null
  readonly holder: ChangeHolder | null
}

/**
 * A change as `spool ralph --list` shows it, and as `--list --json` prints it for a CI matrix:
 * `ready` only when a new loop may start on it now (active, with a proposal, not complete, and
 * nobody holding it).
 */
export interface ListedChange {
  readonly id: string
  readonly ready: boolean
  readonly state: "ready" | "running" | "complete" | "archived" | "not-ready"
  /** Why it is complete (`not merged: ...` when its work is not home) or not ready; null otherwise. */
  readonly why: string | null
  /** What became of its last run's merge in a `--merge` sweep; null when none was asked for. */
  readonly merge: MergeNote | null
  /** A person's word on that merge (`--approve`): `awaiting`, `approved` or `rejected`; null when none was asked for. */
  readonly approval: ApprovalNote["decision"] | null
  /** How its last run ended or stands; null when none ran. */
  readonly lastStatus: LoopStatus | null
  readonly iteration: number
  readonly maxIterations: number | null
  /** Who runs it (while `running`), and when that one's lease lapses. */
  readonly holder: string | null
  readonly leaseExpiresAt: string | null
  /** Its tasks: done (complete or shelved), shelved, and all of them; null when it has none. */
  readonly tasks: TasksDone | null
  /** After a usage limit: when to run it again. */
  readonly resumeAt: string | null
}

export const listChange = ({ candidate, holder, lastRun }: ListInput): ListedChange => {
  const ready = readiness(candidate)
  const state: ListedChange["state"] = candidate.archived
    ? "archived"
    : holder !== null
    ? "running"
    : ready._tag === "Complete" || ready._tag === "Unmerged" || ready._tag === "AwaitingApproval"
    ? "complete"
    : ready._tag === "NotReady"
    ? "not-ready"
    : "ready"
  return {
    id: candidate.id,
    ready: state === "ready",
    state,
    why: state === "complete" || state === "not-ready" ? (ready._tag === "Ready" ? null : ready.why) : null,
    merge: candidate.merge,
    approval: candidate.approval ?? null,
    lastStatus: lastRun?.status ?? null,
    iteration: lastRun?.iteration ?? 0,
    maxIterations: lastRun?.maxIterations ?? null,
    holder: holder?.name ?? null,
    leaseExpiresAt: holder?.expiresAt ?? null,
    tasks: candidate.tasks === null || candidate.tasks.total === 0 ? null : tasksDone(candidate.tasks),
    resumeAt: lastRun?.resumeAt ?? null
  }
}

// Change ids are directory names, so no two are equal.
const archivedLast = (a: ListedChange, b: ListedChange) =>
  (a.state === "archived") !== (b.state === "archived") ? (a.state === "archived" ? 1 : -1) : a.id < b.id ? -1 : 1

/** The changes in id order, archived ones last. */
export const listChanges = (inputs: ReadonlyArray<ListInput>): ReadonlyArray<ListedChange> => inputs.map(listChange).sort(archivedLast)
