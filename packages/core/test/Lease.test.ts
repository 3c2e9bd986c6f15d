import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option, Ref, TestClock } from "effect"
import { ChangeId } from "../src/domain/Domain.js"
import { decideTake, isExpired, newLease, renewalIntervalMs, renewLease } from "../src/remote/Lease.js"
import { MemoryRemote, RemoteError, RemoteHome } from "../src/remote/RemoteHome.js"
import { holdLease, leaseLayer } from "../src/remote/RemoteLease.js"
import { Checkpoint } from "../src/remote/Checkpoint.js"
import { type LockError, LoopLock } from "../src/state/LoopLock.js"

const T0 = Date.parse("2026-11-27T10:00:00.000Z")
const me = { holder: "ci-1/100/aaaa", host: "ci-1", pid: 100 }
const other = { holder: "ci-2/200/bbbb", host: "ci-2", pid: 200 }
const TTL = 15 * 60_000
const changeId = ChangeId.make("002-01_add-ralph-loop")

describe("the lease's decisions", () => {
  it("takes a change nobody holds, expecting no lease on the remote", () => {
    assert.deepStrictEqual(decideTake({ _tag: "Free" }, T0), { _tag: "Take", expected: null, over: null })
  })

  it("finds a live holder busy, up to the last millisecond of its lease", () => {
    const lease = newLease(other, T0, TTL)
    assert.deepStrictEqual(decideTake({ _tag: "Held", version: "v1", lease }, T0 + TTL - 1), { _tag: "Busy", lease })
  })

  it("takes over a lease that has expired, expecting its version", () => {
    const lease = newLease(other, T0, TTL)
    assert.deepStrictEqual(decideTake({ _tag: "Held", version: "v1", lease }, T0 + TTL), { _tag: "Take", expected: "v1", over: lease })
  })

  it("takes a lease nobody can read: it names no live holder", () => {
    assert.deepStrictEqual(decideTake({ _tag: "Held", version: "v9", lease: null }, T0), { _tag: "Take", expected: "v9", over: null })
  })

  it("counts a lease with an unreadable expiry as expired", () => {
    assert.isTrue(isExpired({ ...newLease(other, T0, TTL), expiresAt: "soon" }, T0))
  })

  it("writes who holds it and until when, and a renewal moves only the renewal and the expiry", () => {
    const lease = newLease(me, T0, TTL)
    assert.deepStrictEqual(lease, {
      holder: me.holder,
      host: "ci-1",
      pid: 100,
      takenAt: "2026-11-27T10:00:00.000Z",
      renewedAt: "2026-11-27T10:00:00.000Z",
      expiresAt: "2026-11-27T10:15:00.000Z"
    })
    assert.deepStrictEqual(renewLease(lease, T0 + 60_000, TTL), {
      ...lease,
      renewedAt: "2026-11-27T10:01:00.000Z",
      expiresAt: "2026-11-27T10:16:00.000Z"
    })
  })

  it("renews three times a TTL", () => {
    assert.strictEqual(renewalIntervalMs(TTL), 5 * 60_000)
    assert.strictEqual(renewalIntervalMs(2), 1)
  })
})

const leaseOn = (remote: MemoryRemote) => Effect.map(Ref.get(remote.leases), (map) => map.get(changeId) ?? null)
const settings = { ttlMs: TTL, identity: me }

describe("a held lease", () => {
  it.effect("is taken on the remote for the scope and given up when it closes", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const during = yield* Effect.scoped(Effect.gen(function*() {
        const held = yield* holdLease(changeId, settings)
        assert.isNull(held.over)
        return yield* leaseOn(remote)
      })).pipe(Effect.provideService(RemoteHome, remote.home))
      assert.strictEqual(during?.lease.holder, me.holder)
      assert.isNull(yield* leaseOn(remote))
    }))

  it.effect("is refused while a live holder has it, and nothing is written", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      yield* remote.home.swapLease(changeId, newLease(other, T0, TTL), null)
      const before = yield* leaseOn(remote)
      const exit = yield* Effect.exit(Effect.scoped(holdLease(changeId, settings))).pipe(Effect.provideService(RemoteHome, remote.home))
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause : null
      assert.include(String(error), "another loop holds the lease of 002-01_add-ralph-loop on origin (pid 200 on ci-2, until 2026-11-27T10:15:00.000Z)")
      assert.deepStrictEqual(yield* leaseOn(remote), before)
    }))

  it.effect("takes over a lease whose holder stopped renewing it, naming it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + TTL)
      const remote = yield* MemoryRemote.make("origin")
      const stale = newLease(other, T0, TTL)
      yield* remote.home.swapLease(changeId, stale, null)
      const over = yield* Effect.scoped(Effect.map(holdLease(changeId, settings), (held) => held.over)).pipe(
        Effect.provideService(RemoteHome, remote.home)
      )
      assert.deepStrictEqual(over, stale)
    }))

  it.effect("is refused when another loop takes it between the read and the swap", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const racing = RemoteHome.of({
        ...remote.home,
        swapLease: (id, next, expected) =>
          Effect.zipRight(remote.home.swapLease(id, newLease(other, T0, TTL), expected), remote.home.swapLease(id, next, expected))
      })
      const exit = yield* Effect.exit(Effect.scoped(holdLease(changeId, settings))).pipe(Effect.provideService(RemoteHome, racing))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "pid 200 on ci-2")
      assert.strictEqual((yield* leaseOn(remote))?.lease.holder, other.holder)
    }))

  it.effect("is left to expire, and said so, when the remote does not answer within the grace period to give it up", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const told = yield* Ref.make<ReadonlyArray<string>>([])
      // Answers the taking; never answers the giving up.
      const silentAtEnd = RemoteHome.of({
        ...remote.home,
        swapLease: (id, next, expected) => (next === null ? Effect.never : remote.home.swapLease(id, next, expected))
      })
      const ending = yield* Effect.fork(Effect.scoped(holdLease(changeId, {
        ...settings,
        leftToExpire: (lease) => Ref.update(told, (lines) => [...lines, `${lease.holder} until ${lease.expiresAt}`])
      })).pipe(Effect.provideService(RemoteHome, silentAtEnd)))
      yield* TestClock.adjust("4 seconds")
      assert.deepStrictEqual(yield* Ref.get(told), [])
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(ending)
      assert.deepStrictEqual(yield* Ref.get(told), [`${me.holder} until 2026-11-27T10:15:00.000Z`])
      assert.strictEqual((yield* leaseOn(remote))?.lease.holder, me.holder)
    }))

  it.effect("is left to expire, and said so, when the remote refuses to give it up", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const told = yield* Ref.make(0)
      const failingAtEnd = RemoteHome.of({
        ...remote.home,
        swapLease: (id, next, expected) =>
          next === null ? Effect.fail(new RemoteError({ remote: "origin", action: "give up the lease", detail: "refused" })) : remote.home.swapLease(id, next, expected)
      })
      yield* Effect.scoped(holdLease(changeId, { ...settings, leftToExpire: () => Ref.update(told, (n) => n + 1) })).pipe(
        Effect.provideService(RemoteHome, failingAtEnd)
      )
      assert.strictEqual(yield* Ref.get(told), 1)
    }))

  it.effect("says nothing of expiring when it is given up", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const told = yield* Ref.make(0)
      yield* Effect.scoped(holdLease(changeId, { ...settings, leftToExpire: () => Ref.update(told, (n) => n + 1) })).pipe(
        Effect.provideService(RemoteHome, remote.home)
      )
      assert.strictEqual(yield* Ref.get(told), 0)
      assert.isNull(yield* leaseOn(remote))
    }))

  it.effect("is renewed every third of its TTL while the scope lasts", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      yield* Effect.scoped(Effect.gen(function*() {
        yield* holdLease(changeId, settings)
        yield* TestClock.adjust("5 minutes")
        assert.strictEqual((yield* leaseOn(remote))?.lease.expiresAt, "2026-11-27T10:20:00.000Z")
        yield* TestClock.adjust("5 minutes")
        assert.strictEqual((yield* leaseOn(remote))?.lease.expiresAt, "2026-11-27T10:25:00.000Z")
      })).pipe(Effect.provideService(RemoteHome, remote.home))
    }))

  it.effect("pushes with the lease renewed at each checkpoint", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      yield* Effect.scoped(Effect.gen(function*() {
        const held = yield* holdLease(changeId, settings)
        yield* TestClock.setTime(T0 + 60_000)
        yield* held.checkpoint
        yield* held.check
      })).pipe(Effect.provideService(RemoteHome, remote.home))
      const pushes = yield* Ref.get(remote.pushes)
      assert.deepStrictEqual(pushes.map((p) => p.lease.expiresAt), ["2026-11-27T10:16:00.000Z"])
    }))

  it.effect("once taken over by another, pushes nothing, fails its checks, and leaves the other's lease alone", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const theirs = newLease(other, T0 + TTL, TTL)
      const result = yield* Effect.scoped(Effect.gen(function*() {
        const held = yield* holdLease(changeId, settings)
        const ours = yield* leaseOn(remote)
        yield* remote.home.swapLease(changeId, theirs, ours!.version)
        const pushed = yield* Effect.exit(held.checkpoint)
        const checked = yield* Effect.exit(held.check)
        return { pushed, checked }
      })).pipe(Effect.provideService(RemoteHome, remote.home))
      assert.include(String(Exit.isFailure(result.pushed) ? result.pushed.cause : ""), "lost its lease on origin to another loop (now pid 200 on ci-2)")
      assert.isTrue(Exit.isFailure(result.checked))
      assert.deepStrictEqual(yield* Ref.get(remote.pushes), [])
      assert.deepStrictEqual((yield* leaseOn(remote))?.lease, theirs)
    }))

  it.effect("notices a takeover at its next renewal, before any push", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      yield* Effect.scoped(Effect.gen(function*() {
        const held = yield* holdLease(changeId, settings)
        const ours = yield* leaseOn(remote)
        yield* remote.home.swapLease(changeId, newLease(other, T0, TTL), ours!.version)
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(held.check)))
        yield* TestClock.adjust("5 minutes")
        assert.isTrue(Exit.isFailure(yield* Effect.exit(held.check)))
      })).pipe(Effect.provideService(RemoteHome, remote.home))
      assert.strictEqual((yield* leaseOn(remote))?.lease.holder, other.holder)
    }))

  it.effect("keeps renewing after a renewal the remote could not take", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const calls = yield* Ref.make(0)
      const flaky = RemoteHome.of({
        ...remote.home,
        // The take succeeds, the first renewal meets an unreachable remote, the next ones go through.
        swapLease: (id, next, expected) =>
          Effect.flatMap(Ref.updateAndGet(calls, (n) => n + 1), (n) =>
            n === 2
              ? Effect.fail(new RemoteError({ remote: "origin", action: "renew the lease", detail: "connection refused" }))
              : remote.home.swapLease(id, next, expected))
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const held = yield* holdLease(changeId, settings)
        yield* TestClock.adjust("5 minutes")
        assert.strictEqual((yield* leaseOn(remote))?.lease.expiresAt, "2026-11-27T10:15:00.000Z")
        yield* TestClock.adjust("5 minutes")
        assert.strictEqual((yield* leaseOn(remote))?.lease.expiresAt, "2026-11-27T10:25:00.000Z")
        yield* held.check
      })).pipe(Effect.provideService(RemoteHome, flaky))
    }))

  it.effect("names the lease's ref in what it fails with", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      yield* remote.home.swapLease(changeId, newLease(other, T0, TTL), null)
      const error = yield* Effect.flip(Effect.scoped(holdLease(changeId, settings))).pipe(Effect.provideService(RemoteHome, remote.home))
      assert.deepInclude(error, { _tag: "LockError", path: `refs/spool/lease/${changeId}`, remote: "origin" })
    }))

  it.effect("when its swap is refused and the lease is gone again by the time it looks, says an unknown loop had it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const refusing = RemoteHome.of({ ...remote.home, swapLease: () => Effect.succeed(Option.none()) })
      const error = yield* Effect.flip(Effect.scoped(holdLease(changeId, settings))).pipe(Effect.provideService(RemoteHome, refusing))
      assert.deepInclude(error, { _tag: "LockError" })
      assert.deepStrictEqual((error as LockError).owner, { pid: 0, host: "unknown", startedAt: "unknown" })
    }))

  it.effect("once lost, is not given up at the end: the remote is not written again, and nothing is said of expiring", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      const writes = yield* Ref.make(0)
      const told = yield* Ref.make(0)
      const counting = RemoteHome.of({
        ...remote.home,
        swapLease: (id, next, expected) => Effect.zipRight(Ref.update(writes, (n) => n + 1), remote.home.swapLease(id, next, expected))
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const held = yield* holdLease(changeId, { ...settings, leftToExpire: () => Ref.update(told, (n) => n + 1) })
        const ours = yield* leaseOn(remote)
        yield* remote.home.swapLease(changeId, newLease(other, T0, TTL), ours!.version)
        yield* Effect.exit(held.checkpoint)
      })).pipe(Effect.provideService(RemoteHome, counting))
      // The take, and nothing after the loss was found.
      assert.strictEqual(yield* Ref.get(writes), 1)
      // The lease is another loop's now: there is nothing of ours left to expire.
      assert.strictEqual(yield* Ref.get(told), 0)
    }))

  it.effect("is the loop's lock (its check fails once the lease is lost) and its checkpoint (a push)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const remote = yield* MemoryRemote.make("origin")
      yield* Effect.scoped(Effect.gen(function*() {
        const held = yield* holdLease(changeId, settings)
        const services = yield* Layer.build(leaseLayer(held).pipe(Layer.provide(LoopLock.layerMemory)))
        const lock = Context.get(services, LoopLock)
        const checkpoint = Context.get(services, Checkpoint)
        yield* lock.acquire(changeId)
        yield* lock.check(changeId)
        yield* checkpoint.save(changeId)
        assert.strictEqual((yield* Ref.get(remote.pushes)).length, 1)
        const ours = yield* leaseOn(remote)
        yield* remote.home.swapLease(changeId, newLease(other, T0, TTL), ours!.version)
        assert.deepInclude(yield* Effect.flip(checkpoint.save(changeId)), { _tag: "LockLostError", reason: "TakenOver" })
        assert.deepInclude(yield* Effect.flip(lock.check(changeId)), { _tag: "LockLostError", remote: "origin" })
      })).pipe(Effect.provideService(RemoteHome, remote.home))
    }))
})
