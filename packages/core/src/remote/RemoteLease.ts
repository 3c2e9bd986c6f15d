import { Clock, Effect, Either, Layer, Option, Ref, type Scope } from "effect"
import type { ChangeId } from "../domain/Domain.js"
import { withinGrace } from "../harness/Grace.js"
import { LockError, LockLostError, type LockOwner, LoopLock } from "../state/LoopLock.js"
import { Checkpoint } from "./Checkpoint.js"
import { decideTake, type Lease, type LeaseIdentity, newLease, renewalIntervalMs, renewLease } from "./Lease.js"
import { type RemoteError, RemoteHome } from "./RemoteHome.js"

/** How a loop holds a lease: for how long each renewal lasts, and who it is. */
export interface LeaseSettings {
  readonly ttlMs: number
  readonly identity: LeaseIdentity
  /** Told when the lease could not be given up at the end (the remote did not answer in time): it lapses by itself. */
  readonly leftToExpire?: (lease: Lease) => Effect.Effect<void>
}

/** A lease held for a scope: whether it is still this loop's, and the push that keeps the loop's work. */
export interface HeldLease {
  /** Fails once another loop has taken the lease. */
  readonly check: Effect.Effect<void, LockLostError>
  /** Pushes the branch and state with the lease renewed; fails, having written nothing, once the lease is lost. */
  readonly checkpoint: Effect.Effect<void, LockLostError | RemoteError>
  /** The expired lease this one took over, if any. */
  readonly over: Lease | null
}

/** The lease's ref, as messages name it. */
export const leaseRef = (changeId: ChangeId) => `refs/spool/lease/${changeId}`

const ownerOf = (lease: Lease): LockOwner => ({ pid: lease.pid, host: lease.host, startedAt: lease.takenAt, expiresAt: lease.expiresAt })

/**
 * Takes the change's lease on the remote for the scope, or fails with a `LockError` naming the
 * live holder (a swap lost to another loop taking it at the same moment included). While the scope
 * lasts, the lease is renewed every third of its TTL; a renewal the remote refuses means another
 * took it over, and from then on `check` and `checkpoint` fail. The lease is given up when the
 * scope closes, unless it was lost.
 */
export const holdLease = (
  changeId: ChangeId,
  settings: LeaseSettings
): Effect.Effect<HeldLease, LockError | RemoteError, RemoteHome | Scope.Scope> =>
  Effect.gen(function*() {
    const home = yield* RemoteHome
    const where = { path: leaseRef(changeId), remote: home.remote }
    const busy = (lease: Lease | null) =>
      new LockError({ changeId, owner: lease === null ? { pid: 0, host: "unknown", startedAt: "unknown" } : ownerOf(lease), ...where })

    const now = yield* Clock.currentTimeMillis
    const decision = decideTake(yield* home.readLease(changeId), now)
    if (decision._tag === "Busy") return yield* busy(decision.lease)
    const mine = newLease(settings.identity, now, settings.ttlMs)
    const taken = yield* home.swapLease(changeId, mine, decision.expected)
    if (Option.isNone(taken)) {
      // Another loop took it between the read and the swap.
      const view = yield* home.readLease(changeId)
      return yield* busy(view._tag === "Held" ? view.lease : null)
    }

    const current = yield* Ref.make({ version: taken.value, lease: mine })
    /** Once lost: who holds the lease now (null when that cannot be read). */
    const lost = yield* Ref.make<Option.Option<Lease | null>>(Option.none())
    const permit = yield* Effect.makeSemaphore(1)
    const lostError = (holder: Lease | null) =>
      new LockLostError({ changeId, reason: "TakenOver", owner: holder === null ? null : ownerOf(holder), ...where })
    const markLost = Effect.gen(function*() {
      const view = yield* Effect.orElseSucceed(home.readLease(changeId), () => ({ _tag: "Free" }) as const)
      const holder = view._tag === "Held" ? view.lease : null
      yield* Ref.set(lost, Option.some(holder))
      return lostError(holder)
    })
    const check = Effect.flatMap(Ref.get(lost), Option.match({ onNone: () => Effect.void, onSome: (holder) => Effect.fail(lostError(holder)) }))

    /** Writes the lease renewed, by `write`, while it is still ours; fails once it is not. */
    const renewWith = (write: (next: Lease, expected: string) => Effect.Effect<Option.Option<string>, RemoteError>) =>
      permit.withPermits(1)(Effect.gen(function*() {
        yield* check
        const held = yield* Ref.get(current)
        const next = renewLease(held.lease, yield* Clock.currentTimeMillis, settings.ttlMs)
        const written = yield* write(next, held.version)
        if (Option.isNone(written)) return yield* Effect.flip(markLost)
        yield* Ref.set(current, { version: written.value, lease: next })
      }))

    // A renewal the remote could not take (unreachable) is tried again at the next one; the lease
    // lapses only if every renewal of a TTL fails.
    const renewal = Effect.sleep(renewalIntervalMs(settings.ttlMs)).pipe(
      Effect.zipRight(renewWith((next, expected) => home.swapLease(changeId, next, expected))),
      Effect.catchTag("RemoteError", () => Effect.void),
      Effect.forever
    )
    yield* Effect.forkScoped(Effect.ignore(renewal))
    // Given up within the grace period of a stopping loop: a remote that does not answer (or a
    // renewal stuck on one) leaves the lease to lapse, and says so, rather than holding the loop.
    const giveUp = permit.withPermits(1)(Effect.gen(function*() {
      if (Option.isSome(yield* Ref.get(lost))) return true
      yield* Ref.set(lost, Option.some(null))
      return Either.isRight(yield* Effect.either(home.swapLease(changeId, null, (yield* Ref.get(current)).version)))
    }))
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const given = yield* withinGrace(giveUp)
        if (Option.isSome(given) && given.value) return
        if (settings.leftToExpire !== undefined) yield* settings.leftToExpire((yield* Ref.get(current)).lease)
      })
    )

    return {
      check,
      checkpoint: renewWith((next, expected) => home.push(changeId, next, expected)),
      over: decision.over
    } satisfies HeldLease
  })

/**
 * The loop's lock and checkpoint while `held` is held: the lock of this machine (`local`), which
 * also fails its check once the lease is lost, and a checkpoint that pushes.
 */
export const leaseLayer = (held: HeldLease) =>
  Layer.merge(
    Layer.effect(
      LoopLock,
      Effect.map(LoopLock, (local) => ({
        ...local,
        check: (changeId: ChangeId) => Effect.zipRight(local.check(changeId), held.check)
      }))
    ),
    Layer.succeed(Checkpoint, { save: () => held.checkpoint })
  )
