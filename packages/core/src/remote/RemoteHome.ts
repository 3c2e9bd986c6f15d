import { Context, Effect, Option, Ref, Schema } from "effect"
import type { ChangeId } from "../domain/Domain.js"
import type { Lease, LeaseView } from "./Lease.js"

/** The remote could not be read or written (unreachable, refused for a reason other than the lease). */
export class RemoteError extends Schema.TaggedError<RemoteError>()("RemoteError", {
  remote: Schema.String,
  /** What spool was doing: `fetch`, `push`, `read the lease of 002-01`... */
  action: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `could not ${this.action} on the remote ${this.remote}: ${this.detail}; check that it can be reached (git fetch ${this.remote}), then run again with --resume`
  }
}

/** What `pull` found on the remote. */
export interface Pulled {
  /** The remote had the change's branch; else it was made from the current branch. */
  readonly branch: boolean
  /** The remote had the loop's state, now in the local state directory. */
  readonly state: boolean
  /** What the pull had to do that the user should know of (commits only this clone had, kept on a branch). */
  readonly notes: ReadonlyArray<string>
}

/**
 * A change's loop kept on a remote: its branch, its state (history, context, error journal) and its
 * lease. Every write of the lease is a compare-and-swap, and the branch and state are pushed with
 * the lease's renewal in one atomic push, so that a loop whose lease another has taken writes nothing.
 */
export class RemoteHome extends Context.Tag("@spool/core/RemoteHome")<RemoteHome, {
  /** The remote's name, for messages. */
  readonly remote: string
  readonly readLease: (changeId: ChangeId) => Effect.Effect<LeaseView, RemoteError>
  /**
   * Writes `next` (null: removes the lease) if the remote's lease is still `expected` (null: none):
   * its new version, or none when the remote had another.
   */
  readonly swapLease: (changeId: ChangeId, next: Lease | null, expected: string | null) => Effect.Effect<Option.Option<string>, RemoteError>
  /** Brings the change's branch and state from the remote (the state replaces the local one). */
  readonly pull: (changeId: ChangeId) => Effect.Effect<Pulled, RemoteError>
  /**
   * Pushes the change's branch (a fast-forward) and its state, with the lease renewed to `next`,
   * all or nothing, if the remote's lease is still `expected`: the lease's new version, or none
   * when the remote had another lease.
   */
  readonly push: (changeId: ChangeId, next: Lease, expected: string) => Effect.Effect<Option.Option<string>, RemoteError>
}>() {}

/** A remote in memory: its leases, and each push it took. */
export class MemoryRemote {
  private constructor(
    readonly home: RemoteHome["Type"],
    readonly leases: Ref.Ref<ReadonlyMap<string, { readonly version: string; readonly lease: Lease }>>,
    readonly pushes: Ref.Ref<ReadonlyArray<{ readonly changeId: string; readonly lease: Lease }>>
  ) {}

  static make(remote = "memory") {
    return Effect.gen(function*() {
      const leases = yield* Ref.make<ReadonlyMap<string, { readonly version: string; readonly lease: Lease }>>(new Map())
      const pushes = yield* Ref.make<ReadonlyArray<{ readonly changeId: string; readonly lease: Lease }>>([])
      const versions = yield* Ref.make(0)
      const swap = (changeId: string, next: Lease | null, expected: string | null) =>
        Effect.flatMap(Ref.updateAndGet(versions, (n) => n + 1), (n) =>
          Ref.modify(leases, (map): [Option.Option<string>, ReadonlyMap<string, { version: string; lease: Lease }>] => {
            if ((map.get(changeId)?.version ?? null) !== expected) return [Option.none(), map]
            const left = new Map(map)
            if (next === null) {
              left.delete(changeId)
              return [Option.some(""), left]
            }
            left.set(changeId, { version: `v${n}`, lease: next })
            return [Option.some(`v${n}`), left]
          }))
      const home: RemoteHome["Type"] = {
        remote,
        readLease: (changeId) =>
          Effect.map(Ref.get(leases), (map) => {
            const held = map.get(changeId)
            return held === undefined ? { _tag: "Free" } : { _tag: "Held", version: held.version, lease: held.lease }
          }),
        swapLease: swap,
        pull: () => Effect.succeed({ branch: false, state: false, notes: [] }),
        push: (changeId, next, expected) =>
          Effect.tap(swap(changeId, next, expected), (done) =>
            Option.isSome(done) ? Ref.update(pushes, (list) => [...list, { changeId, lease: next }]) : Effect.void)
      }
      return new MemoryRemote(home, leases, pushes)
    })
  }
}
