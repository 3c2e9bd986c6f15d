import { FileSystem, Path } from "@effect/platform"
import { Clock, Context, Effect, Layer, Option, Ref, Schema, type Scope } from "effect"
import { randomTag, readFileOrNull } from "./AtomicFile.js"
import type { ChangeId } from "../domain/Domain.js"
import { StateError } from "./StateError.js"
import { Workspace } from "./Workspace.js"

export const LockOwner = Schema.Struct({
  pid: Schema.Int,
  host: Schema.String,
  startedAt: Schema.String,
  /** The work tree the loop runs in (absent in locks written before it was recorded). */
  // Stryker disable next-line ObjectLiteral: owners are only decoded from JSON text, which never holds an undefined workTree
  workTree: Schema.optionalWith(Schema.String, { exact: true }),
  /**
   * When a lease-held lock lapses unless renewed (ISO time). The local file lock writes none and a
   * lock without one never lapses: a dead owner is told by its pid instead.
   */
  // Stryker disable next-line ObjectLiteral: owners are only decoded from JSON text, which never holds an undefined expiresAt
  expiresAt: Schema.optionalWith(Schema.String, { exact: true })
})
export type LockOwner = typeof LockOwner.Type

/** Another loop holds the change. */
export class LockError extends Schema.TaggedError<LockError>()("LockError", {
  changeId: Schema.String,
  owner: LockOwner,
  path: Schema.String,
  /** The remote whose lease (at `path`, a ref) another machine holds; absent for a lock on this machine. */
  remote: Schema.optionalWith(Schema.String, { exact: true })
}) {
  override get message() {
    if (this.remote !== undefined) {
      return `another loop holds the lease of ${this.changeId} on ${this.remote} (pid ${this.owner.pid} on ${this.owner.host}, ` +
        `until ${this.owner.expiresAt ?? "unknown"}); nothing was done: it is taken over only once it expires unrenewed`
    }
    return `a loop is already running on ${this.changeId} (pid ${this.owner.pid} on ${this.owner.host}, since ${this.owner.startedAt}); see spool ralph --status --change ${this.changeId} (if no loop runs, delete ${this.path})`
  }
}

/** The lock a loop holds is no longer its own: its file was removed, or another loop holds it now. */
export class LockLostError extends Schema.TaggedError<LockLostError>()("LockLostError", {
  changeId: Schema.String,
  path: Schema.String,
  reason: Schema.Literal("Removed", "TakenOver"),
  /** Who holds the lock now, when another loop does and its lock can be read. */
  owner: Schema.NullOr(LockOwner),
  /** The remote whose lease (at `path`, a ref) was lost; absent for a lock on this machine. */
  remote: Schema.optionalWith(Schema.String, { exact: true })
}) {
  override get message() {
    if (this.remote !== undefined) {
      const who = this.owner === null ? "" : ` (now pid ${this.owner.pid} on ${this.owner.host})`
      return `the loop on ${this.changeId} lost its lease on ${this.remote} to another loop${who} and stopped without writing to the remote, ` +
        `so that no two loops work on one change; see spool ralph --status --change ${this.changeId} --remote ${this.remote}`
    }
    const now = this.reason === "Removed"
      ? `${this.path} was removed`
      : this.owner === null
      ? `${this.path} now holds another loop's lock`
      : `${this.path} is now held by pid ${this.owner.pid} on ${this.owner.host}`
    return `the loop on ${this.changeId} lost its lock (${now}) and stopped, so that no two loops work on one change; ` +
      `see spool ralph --status --change ${this.changeId}, and start the loop again once no other runs on it`
  }
}

/** Who this process is, and how to tell whether a process of this host still runs. */
export interface LockIdentity {
  readonly pid: number
  readonly host: string
  readonly isAlive: (pid: number) => boolean
  /** The work tree this process's loop runs in, recorded in its lock. */
  readonly workTree?: string
}

/** A loop that holds a change's lock and still runs on this host. */
export interface LiveLoop {
  readonly changeId: ChangeId
  readonly owner: LockOwner
}

/** One loop per change: a lock file in the change's state directory, taken atomically, released with the scope. */
// Stryker disable next-line StringLiteral: the key only tells the service apart in a context, and no other service has an empty one
export class LoopLock extends Context.Tag("@spool/core/LoopLock")<LoopLock, {
  /** Takes the lock for the scope; succeeds with the owner of a dead loop whose lock it took over, if any. */
  readonly acquire: (changeId: ChangeId) => Effect.Effect<Option.Option<LockOwner>, LockError | StateError, Scope.Scope>
  /** Succeeds while this process still holds the change's lock, taken with `acquire`; fails once it is lost. */
  readonly check: (changeId: ChangeId) => Effect.Effect<void, LockLostError | StateError>
  /** The loops of every change that run on this host now, by their locks. */
  readonly liveLoops: Effect.Effect<ReadonlyArray<LiveLoop>>
}>() {
  static readonly layer = (identity: LockIdentity) =>
    Layer.effect(
      LoopLock,
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        const workspace = yield* Workspace
        const decodeOwner = Schema.decodeUnknownOption(Schema.parseJson(LockOwner))
        /** The lock file and its content, of each change this process holds. */
        const held = yield* Ref.make(new Map<ChangeId, { readonly path: string; readonly content: string }>())
        const lockPath = (changeId: ChangeId) => path.join(workspace.stateDir(changeId), "lock")

        const acquire = (changeId: ChangeId) =>
          Effect.gen(function*() {
            const dir = yield* workspace.ensureStateDir(changeId)
            const lock = path.join(dir, "lock")
            const fail = (cause: { message: string }) => new StateError({ reason: "Write", path: lock, detail: cause.message })
            const mine: LockOwner = {
              pid: identity.pid,
              host: identity.host,
              startedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
              ...(identity.workTree === undefined ? {} : { workTree: identity.workTree })
            }
            const content = JSON.stringify(mine)

            // A complete file linked into place: the lock never exists half-written.
            const tryLink = Effect.scoped(
              Effect.gen(function*() {
                const tmp = path.join(dir, `.lock.${identity.pid}.${yield* randomTag}`)
                yield* Effect.addFinalizer(() => fs.remove(tmp).pipe(Effect.ignore))
                yield* fs.writeFileString(tmp, content, { mode: 0o600 }).pipe(Effect.mapError(fail))
                return yield* fs.link(tmp, lock).pipe(
                  Effect.as(true),
                  Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", () => Effect.succeed(false)),
                  Effect.mapError(fail)
                )
              })
            )

            let takenOver: Option.Option<LockOwner> = Option.none()
            for (let attempt = 0; attempt < 3; attempt++) {
              if (yield* tryLink) {
                yield* Ref.update(held, (map) => new Map(map).set(changeId, { path: lock, content }))
                yield* Effect.addFinalizer(() =>
                  // Only our own lock is removed: a takeover by another process is left alone.
                  readFileOrNull(fs, lock).pipe(
                    Effect.flatMap((text) => (text === content ? fs.remove(lock) : Effect.void)),
                    Effect.ignore,
                    Effect.zipRight(Ref.update(held, (map) => {
                      const left = new Map(map)
                      left.delete(changeId)
                      return left
                    }))
                  )
                )
                return takenOver
              }
              const text = yield* readFileOrNull(fs, lock)
              if (text === null) continue
              const owner = decodeOwner(text)
              const stale = Option.match(owner, {
                // Unreadable lock content cannot name a live owner.
                onNone: () => true,
                onSome: (o) => o.host === identity.host && !identity.isAlive(o.pid)
              })
              if (!stale) return yield* new LockError({ changeId, owner: Option.getOrThrow(owner), path: lock })
              // Move the stale lock aside; if it changed meanwhile, someone else took it over first.
              const aside = path.join(dir, `.lock.stale.${yield* randomTag}`)
              // Stryker disable next-line ArrowFunction: undefined is falsy as false is: the lock counts as not moved either way
              const moved = yield* fs.rename(lock, aside).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
              if (moved) {
                // Stryker disable next-line ArrowFunction: undefined differs from the lock's text as null does: the loop goes on to its next try either way
                const movedText = yield* readFileOrNull(fs, aside).pipe(Effect.orElseSucceed(() => null))
                // Another loop's lock, taken over since it was read: put back where it was (unless yet another
                // loop holds the change by now), so that the next try finds that loop.
                if (movedText !== text) yield* fs.link(aside, lock).pipe(Effect.ignore)
                yield* fs.remove(aside).pipe(Effect.ignore)
                if (movedText !== text) continue
                takenOver = Option.orElse(owner, () => Option.some({ pid: 0, host: "unknown", startedAt: "unknown" }))
              }
            }
            const owner = decodeOwner(yield* readFileOrNull(fs, lock))
            return yield* new LockError({
              changeId,
              owner: Option.getOrElse(owner, () => ({ pid: 0, host: "unknown", startedAt: "unknown" })),
              path: lock
            })
          })

        const check = (changeId: ChangeId) =>
          Effect.gen(function*() {
            const mine = (yield* Ref.get(held)).get(changeId)
            // Never taken (or released): nothing of this process's is there to lose.
            const lock = mine?.path ?? lockPath(changeId)
            const text = yield* readFileOrNull(fs, lock)
            if (mine !== undefined && text === mine.content) return
            if (text === null) return yield* new LockLostError({ changeId, path: lock, reason: "Removed", owner: null })
            return yield* new LockLostError({ changeId, path: lock, reason: "TakenOver", owner: Option.getOrNull(decodeOwner(text)) })
          })

        const liveLoops = Effect.gen(function*() {
          const live: Array<LiveLoop> = []
          for (const changeId of yield* workspace.changesWithState) {
            const text = yield* readFileOrNull(fs, lockPath(changeId)).pipe(
              // Stryker disable next-line ArrowFunction: undefined decodes to no owner as null does
              Effect.orElseSucceed(() => null)
            )
            const owner = decodeOwner(text)
            if (Option.isSome(owner) && owner.value.host === identity.host && identity.isAlive(owner.value.pid)) {
              live.push({ changeId, owner: owner.value })
            }
          }
          return live
        })

        return { acquire, check, liveLoops }
      })
    )

  /** Locks held in memory, for loop tests. */
  static readonly layerMemory = Layer.effect(
    LoopLock,
    Effect.gen(function*() {
      const held = yield* Ref.make(new Set<ChangeId>())
      return {
        liveLoops: Effect.map(Ref.get(held), (set) =>
          [...set].map((changeId) => ({ changeId, owner: { pid: 0, host: "memory", startedAt: "unknown" } }))),
        acquire: (changeId) =>
          Effect.gen(function*() {
            const taken = yield* Ref.modify(held, (set) => (set.has(changeId) ? [false, set] : [true, new Set(set).add(changeId)]))
            if (!taken) {
              return yield* new LockError({
                changeId,
                owner: { pid: 0, host: "memory", startedAt: "unknown" },
                path: `memory:${changeId}/lock`
              })
            }
            yield* Effect.addFinalizer(() => Ref.update(held, (set) => new Set([...set].filter((id) => id !== changeId))))
            return Option.none()
          }),
        check: (changeId) =>
          Effect.flatMap(Ref.get(held), (set) =>
            set.has(changeId)
              ? Effect.void
              : new LockLostError({ changeId, path: `memory:${changeId}/lock`, reason: "Removed", owner: null }))
      }
    })
  )
}
