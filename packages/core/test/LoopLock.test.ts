import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Random, Scope, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ChangeId } from "../src/domain/Domain.js"
import { type LockIdentity, LockError, LockLostError, LoopLock } from "../src/state/LoopLock.js"
import { Workspace } from "../src/state/Workspace.js"

const workspace = () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "spool-lock-")))
  for (const id of ["001-01_a", "001-02_b", "001-03_c"]) {
    fs.mkdirSync(path.join(root, ".spool", "changes", id), { recursive: true })
    fs.writeFileSync(path.join(root, ".spool", "changes", id, "proposal.md"), `# ${id}\n`)
  }
  return root
}

const alive = new Set([100, 200])
const identity = (pid: number, workTree?: string): LockIdentity => ({
  pid,
  host: "here",
  isAlive: (p) => alive.has(p),
  ...(workTree === undefined ? {} : { workTree })
})

const withLock = <A, E>(root: string, who: LockIdentity, body: Effect.Effect<A, E, LoopLock>) =>
  body.pipe(
    Effect.provide(LoopLock.layer(who).pipe(Layer.provideMerge(Workspace.layer(root)))),
    Effect.provide(NodeContext.layer)
  )

/** The real file system with some of its operations replaced, to play another process's moves at a given moment. */
const withFileSystem = <A, E>(
  root: string,
  who: LockIdentity,
  change: (fs: FileSystem.FileSystem) => Partial<FileSystem.FileSystem>,
  body: Effect.Effect<A, E, LoopLock>
) =>
  body.pipe(
    Effect.provide(
      LoopLock.layer(who).pipe(
        Layer.provide(Layer.effect(FileSystem.FileSystem, Effect.map(FileSystem.FileSystem, (fs) => ({ ...fs, ...change(fs) })))),
        Layer.provideMerge(Workspace.layer(root))
      )
    ),
    Effect.provide(NodeContext.layer)
  )

const linkFails = (reason: "AlreadyExists" | "PermissionDenied", path: string) =>
  Effect.fail(new SystemError({ reason, module: "FileSystem", method: "link", pathOrDescriptor: path }))

const stateDir = (root: string, id: string) => path.join(root, ".spool", ".state", "ralph", id)
const lockFile = (root: string, id: string) => path.join(stateDir(root, id), "lock")
const readLock = (root: string, id: string) => JSON.parse(fs.readFileSync(lockFile(root, id), "utf8"))
const acquire = (id: string) => Effect.flatMap(LoopLock, (lock) => lock.acquire(ChangeId.make(id)))

/** Takes 001-01_a for a moment: whose lock it took over, and the lock and state directory while it holds it. */
const takeA = (root: string) =>
  Effect.scoped(Effect.map(acquire("001-01_a"), (takenOver) => ({
    takenOver: Option.getOrNull(takenOver),
    owner: readLock(root, "001-01_a"),
    mode: fs.statSync(lockFile(root, "001-01_a")).mode & 0o777,
    files: fs.readdirSync(stateDir(root, "001-01_a"))
  })))

/** How taking 001-01_a fails. */
const refusedA = Effect.scoped(Effect.flip(acquire("001-01_a")))

const writeLock = (root: string, id: string, owner: object) => {
  const dir = path.join(root, ".spool", ".state", "ralph", id)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "lock"), JSON.stringify(owner))
}

describe("LoopLock", () => {
  it.effect("records the work tree the loop runs in", () =>
    Effect.gen(function*() {
      const root = workspace()
      const text = yield* withLock(
        root,
        identity(100, "/repo/.spool/.state/worktrees/001-01_a"),
        Effect.scoped(
          Effect.flatMap(
            Effect.flatMap(LoopLock, (lock) => lock.acquire(ChangeId.make("001-01_a"))),
            () => Effect.sync(() => fs.readFileSync(path.join(root, ".spool", ".state", "ralph", "001-01_a", "lock"), "utf8"))
          )
        )
      )
      assert.strictEqual(JSON.parse(text).workTree, "/repo/.spool/.state/worktrees/001-01_a")
    }))

  it.effect("lists the loops that still run on this host, with their work trees; dead, foreign and unreadable locks are left out", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeLock(root, "001-01_a", { pid: 100, host: "here", startedAt: "t", workTree: root })
      writeLock(root, "001-02_b", { pid: 300, host: "here", startedAt: "t", workTree: root })
      writeLock(root, "001-03_c", { pid: 200, host: "elsewhere", startedAt: "t" })
      fs.mkdirSync(path.join(root, ".spool", ".state", "ralph", "002-01_d"), { recursive: true })
      fs.writeFileSync(path.join(root, ".spool", ".state", "ralph", "002-01_d", "lock"), "{not json")
      const live = yield* withLock(root, identity(999), Effect.flatMap(LoopLock, (lock) => lock.liveLoops))
      assert.deepStrictEqual(live, [{ changeId: ChangeId.make("001-01_a"), owner: { pid: 100, host: "here", startedAt: "t", workTree: root } }])
    }))

  it.effect("takes a free change: the lock names this process, only its owner can read it, and it is gone on release", () =>
    Effect.gen(function*() {
      const root = workspace()
      const seen = yield* withLock(root, identity(100), takeA(root))
      assert.isNull(seen.takenOver)
      assert.deepStrictEqual(Object.keys(seen.owner).sort(), ["host", "pid", "startedAt"])
      assert.strictEqual(seen.owner.pid, 100)
      assert.strictEqual(seen.owner.host, "here")
      assert.strictEqual(new Date(seen.owner.startedAt).toISOString(), seen.owner.startedAt)
      assert.strictEqual(seen.mode, 0o600)
      assert.deepStrictEqual(seen.files, ["lock"])
      assert.isFalse(fs.existsSync(lockFile(root, "001-01_a")))
    }))

  it.effect("refuses a change held by a loop that still runs here, naming it and the lock to delete", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeLock(root, "001-01_a", { pid: 200, host: "here", startedAt: "2026-01-02T03:04:05.000Z" })
      const error = yield* withLock(root, identity(100), refusedA)
      assert.strictEqual(error._tag, "LockError")
      assert.strictEqual(
        error.message,
        `a loop is already running on 001-01_a (pid 200 on here, since 2026-01-02T03:04:05.000Z); see spool ralph --status --change 001-01_a (if no loop runs, delete ${
          lockFile(root, "001-01_a")
        })`
      )
      assert.deepStrictEqual(readLock(root, "001-01_a"), { pid: 200, host: "here", startedAt: "2026-01-02T03:04:05.000Z" })
    }))

  it.effect("refuses a change a second loop of this process asks for while the first holds it", () =>
    Effect.gen(function*() {
      const root = workspace()
      const error = yield* withLock(
        root,
        identity(100),
        Effect.scoped(Effect.zipRight(acquire("001-01_a"), Effect.flip(Effect.scoped(acquire("001-01_a")))))
      )
      assert.strictEqual(error._tag, "LockError")
      if (error._tag !== "LockError") return
      assert.strictEqual(error.owner.pid, 100)
      assert.isFalse(fs.existsSync(lockFile(root, "001-01_a")))
    }))

  it.effect("refuses a change held by a loop of another host, even one whose pid runs nowhere here", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeLock(root, "001-01_a", { pid: 300, host: "elsewhere", startedAt: "t" })
      const error = yield* withLock(root, identity(100), refusedA)
      assert.strictEqual(error._tag, "LockError")
      assert.deepStrictEqual(readLock(root, "001-01_a"), { pid: 300, host: "elsewhere", startedAt: "t" })
    }))

  it.effect("takes over the lock of a loop of this host that no longer runs, saying whose it was, and leaves no other file", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeLock(root, "001-01_a", { pid: 300, host: "here", startedAt: "t", workTree: root })
      const seen = yield* withLock(root, identity(100), takeA(root))
      assert.deepStrictEqual(seen.takenOver, { pid: 300, host: "here", startedAt: "t", workTree: root })
      assert.strictEqual(seen.owner.pid, 100)
      assert.deepStrictEqual(seen.files, ["lock"])
    }))

  it.effect("takes over a lock whose content is unreadable, its owner unknown", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(stateDir(root, "001-01_a"), { recursive: true })
      fs.writeFileSync(lockFile(root, "001-01_a"), "{half a lo")
      const seen = yield* withLock(root, identity(100), takeA(root))
      assert.deepStrictEqual(seen.takenOver, { pid: 0, host: "unknown", startedAt: "unknown" })
      assert.strictEqual(seen.owner.pid, 100)
    }))

  /** 001-01_a holds the lock of a dead loop, which `pid` takes over just before this loop (pid 100) moves it aside. */
  const takenOverMeanwhile = <A, E>(
    root: string,
    pid: number,
    body: Effect.Effect<A, E, LoopLock>,
    more: (real: FileSystem.FileSystem) => Partial<FileSystem.FileSystem> = () => ({})
  ) => {
    writeLock(root, "001-01_a", { pid: 300, host: "here", startedAt: "t" })
    let replaced = false
    return withFileSystem(
      root,
      identity(100),
      (real) => ({
        ...more(real),
        rename: (from, to) =>
          Effect.zipRight(
            Effect.sync(() => {
              if (!replaced && from === lockFile(root, "001-01_a")) {
                replaced = true
                fs.writeFileSync(from, JSON.stringify({ pid, host: "here", startedAt: "t2" }))
              }
            }),
            real.rename(from, to)
          )
      }),
      body
    ).pipe(Effect.tap(() => assert.isTrue(replaced)))
  }

  it.effect("refuses a stale lock another loop took over just before this one moved it aside, leaving that loop's lock in place", () =>
    Effect.gen(function*() {
      const root = workspace()
      const error = yield* takenOverMeanwhile(root, 200, refusedA)
      assert.strictEqual(error._tag, "LockError")
      if (error._tag !== "LockError") return
      assert.strictEqual(error.owner.pid, 200)
      assert.deepStrictEqual(readLock(root, "001-01_a"), { pid: 200, host: "here", startedAt: "t2" })
      assert.deepStrictEqual(fs.readdirSync(stateDir(root, "001-01_a")), ["lock"])
    }))

  it.effect("names the loop whose lock it took over when the loop that took the stale lock meanwhile has ended too", () =>
    Effect.gen(function*() {
      const root = workspace()
      const seen = yield* takenOverMeanwhile(root, 400, takeA(root))
      assert.strictEqual(seen.takenOver?.pid, 400)
      assert.strictEqual(seen.owner.pid, 100)
      assert.deepStrictEqual(seen.files, ["lock"])
    }))

  it.effect("names no takeover when the loop that took the stale lock meanwhile ends just after its lock is put back", () =>
    Effect.gen(function*() {
      const root = workspace()
      let ended = false
      // Loop 200 takes the dead loop's lock just before this one moves it aside, and ends, removing
      // its lock, once this one has put it back and removed the copy aside.
      const seen = yield* takenOverMeanwhile(root, 200, takeA(root), (real) => ({
        remove: (file, options) =>
          Effect.zipRight(
            real.remove(file, options),
            Effect.sync(() => {
              if (!ended && path.basename(file).startsWith(".lock.stale.")) {
                ended = true
                fs.rmSync(lockFile(root, "001-01_a"))
              }
            })
          )
      }))
      assert.isTrue(ended)
      // The dead loop's lock was taken by loop 200, not by this one.
      assert.isNull(seen.takenOver)
      assert.strictEqual(seen.owner.pid, 100)
      assert.deepStrictEqual(seen.files, ["lock"])
    }))

  it.effect("refuses the change when another loop links its lock just after this one found the lock gone", () =>
    Effect.gen(function*() {
      const root = workspace()
      const live = JSON.stringify({ pid: 200, host: "here", startedAt: "t" })
      let links = 0
      const error = yield* withFileSystem(
        root,
        identity(100),
        (real) => ({
          // the first try finds a lock that is gone when it looks: the other loop's link lands right after
          link: (from, to) => (++links === 1 ? linkFails("AlreadyExists", to) : real.link(from, to)),
          stat: (file) =>
            Effect.tapError(real.stat(file), () =>
              Effect.sync(() => {
                if (file === lockFile(root, "001-01_a") && links === 1) fs.writeFileSync(file, live)
              }))
        }),
        refusedA
      )
      assert.strictEqual(error._tag, "LockError")
      if (error._tag !== "LockError") return
      assert.strictEqual(error.owner.pid, 200)
      assert.strictEqual(fs.readFileSync(lockFile(root, "001-01_a"), "utf8"), live)
    }))

  it.effect("gives up after three tries when the lock keeps changing hands, its owner unknown", () =>
    Effect.gen(function*() {
      const root = workspace()
      let links = 0
      const tries = (allowed: number) =>
        withFileSystem(
          root,
          identity(100),
          (real) => ({
            link: (from, to) => (++links <= allowed ? linkFails("AlreadyExists", to) : real.link(from, to))
          }),
          Effect.scoped(Effect.exit(acquire("001-01_a")))
        )
      const exit = yield* tries(3)
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* Effect.flip(exit)
      assert.strictEqual(error._tag, "LockError")
      assert.include(error.message, "(pid 0 on unknown, since unknown)")
      links = 0
      const second = yield* tries(2)
      assert.isTrue(Exit.isSuccess(second) && Option.isNone(second.value))
    }))

  it.effect("a lock that cannot be linked for another reason is a write error naming it", () =>
    Effect.gen(function*() {
      const root = workspace()
      const error = yield* withFileSystem(
        root,
        identity(100),
        () => ({ link: (_from, to) => linkFails("PermissionDenied", to) }),
        refusedA
      )
      assert.strictEqual(error._tag, "StateError")
      if (error._tag !== "StateError") return
      assert.strictEqual(error.reason, "Write")
      assert.strictEqual(error.path, lockFile(root, "001-01_a"))
      assert.deepStrictEqual(fs.readdirSync(stateDir(root, "001-01_a")), [])
    }))

  it.effect("on release, leaves alone a lock another loop took over meanwhile", () =>
    Effect.gen(function*() {
      const root = workspace()
      const other = JSON.stringify({ pid: 200, host: "here", startedAt: "t" })
      yield* withLock(
        root,
        identity(100),
        Effect.scoped(Effect.tap(acquire("001-01_a"), () => Effect.sync(() => fs.writeFileSync(lockFile(root, "001-01_a"), other))))
      )
      assert.strictEqual(fs.readFileSync(lockFile(root, "001-01_a"), "utf8"), other)
    }))

  it.effect("in memory: one loop per change, listed while it runs, free again on release", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        const lock = yield* LoopLock
        const a = ChangeId.make("001-01_a")
        const b = ChangeId.make("001-02_b")
        const scopeA = yield* Scope.make()
        const first = yield* Scope.extend(lock.acquire(a), scopeA)
        yield* Effect.scoped(lock.acquire(b))
        yield* Scope.extend(lock.acquire(b), scopeA)
        const refused = yield* Effect.flip(Effect.scoped(lock.acquire(a)))
        const whileHeld = yield* lock.liveLoops
        const scopeB = yield* Scope.make()
        yield* Scope.extend(lock.acquire(ChangeId.make("001-03_c")), scopeB)
        yield* Scope.close(scopeA, Exit.void)
        const afterRelease = yield* lock.liveLoops
        const again = yield* Effect.scoped(lock.acquire(a))
        return { first, refused, whileHeld, afterRelease, again }
      }).pipe(Effect.provide(LoopLock.layerMemory))
      assert.isTrue(Option.isNone(seen.first))
      assert.strictEqual(seen.refused._tag, "LockError")
      assert.strictEqual(
        seen.refused.message,
        "a loop is already running on 001-01_a (pid 0 on memory, since unknown); see spool ralph --status --change 001-01_a (if no loop runs, delete memory:001-01_a/lock)"
      )
      const owner = { pid: 0, host: "memory", startedAt: "unknown" }
      assert.deepStrictEqual(seen.whileHeld, [{ changeId: ChangeId.make("001-01_a"), owner }, { changeId: ChangeId.make("001-02_b"), owner }])
      assert.deepStrictEqual(seen.afterRelease, [{ changeId: ChangeId.make("001-03_c"), owner }])
      assert.isTrue(Option.isNone(seen.again))
    }))
})

describe("LoopLock: whether the lock is still held, and where its times and names come from", () => {
  const a = ChangeId.make("001-01_a")

  it.effect("succeeds while the lock is its own, and says it was lost once its file is removed or another loop's lock stands in its place", () =>
    Effect.gen(function*() {
      const root = workspace()
      const seen = yield* withLock(
        root,
        identity(100),
        Effect.scoped(Effect.gen(function*() {
          const lock = yield* LoopLock
          yield* lock.acquire(a)
          const whileHeld = yield* Effect.exit(lock.check(a))
          fs.rmSync(lockFile(root, "001-01_a"))
          const removed = yield* Effect.flip(lock.check(a))
          writeLock(root, "001-01_a", { pid: 200, host: "here", startedAt: "2026-01-02T03:04:05.000Z" })
          const taken = yield* Effect.flip(lock.check(a))
          fs.writeFileSync(lockFile(root, "001-01_a"), "{not json")
          const unreadable = yield* Effect.flip(lock.check(a))
          return { whileHeld, removed, taken, unreadable }
        }))
      )
      assert.isTrue(Exit.isSuccess(seen.whileHeld))
      assert.deepInclude(seen.removed, { _tag: "LockLostError", reason: "Removed", owner: null, path: lockFile(root, "001-01_a") })
      assert.strictEqual(
        seen.removed.message,
        `the loop on 001-01_a lost its lock (${lockFile(root, "001-01_a")} was removed) and stopped, so that no two loops work on one change; ` +
          "see spool ralph --status --change 001-01_a, and start the loop again once no other runs on it"
      )
      assert.deepInclude(seen.taken, { reason: "TakenOver", owner: { pid: 200, host: "here", startedAt: "2026-01-02T03:04:05.000Z" } })
      assert.include(seen.taken.message, `(${lockFile(root, "001-01_a")} is now held by pid 200 on here)`)
      assert.deepInclude(seen.unreadable, { reason: "TakenOver", owner: null })
      assert.include(seen.unreadable.message, `(${lockFile(root, "001-01_a")} now holds another loop's lock)`)
    }))

  it.effect("holds nothing to check once released, nor for a change it never took", () =>
    Effect.gen(function*() {
      const root = workspace()
      const seen = yield* withLock(root, identity(100), Effect.gen(function*() {
        const lock = yield* LoopLock
        yield* Effect.scoped(lock.acquire(a))
        const released = yield* Effect.flip(lock.check(a))
        writeLock(root, "001-02_b", { pid: 200, host: "here", startedAt: "t" })
        const never = yield* Effect.flip(lock.check(ChangeId.make("001-02_b")))
        return { released, never }
      }))
      assert.strictEqual(seen.released.reason, "Removed")
      assert.deepInclude(seen.never, { reason: "TakenOver", owner: { pid: 200, host: "here", startedAt: "t" } })
    }))

  it.effect("in memory: held until released", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        const lock = yield* LoopLock
        const whileHeld = yield* Effect.scoped(Effect.zipRight(lock.acquire(a), Effect.exit(lock.check(a))))
        return { whileHeld, released: yield* Effect.flip(lock.check(a)) }
      }).pipe(Effect.provide(LoopLock.layerMemory))
      assert.isTrue(Exit.isSuccess(seen.whileHeld))
      assert.deepInclude(seen.released, { _tag: "LockLostError", reason: "Removed", path: "memory:001-01_a/lock" })
    }))

  it("as a remote's lease: the refusal and the loss name the remote, who holds it and until when", () => {
    const owner = { pid: 7, host: "ci-1", startedAt: "2026-01-02T03:04:05.000Z", expiresAt: "2026-01-02T03:09:05.000Z" }
    const lease = { changeId: "001-01_a", path: "refs/spool/leases/001-01_a", remote: "origin" }
    assert.strictEqual(
      new LockError({ ...lease, owner }).message,
      "another loop holds the lease of 001-01_a on origin (pid 7 on ci-1, until 2026-01-02T03:09:05.000Z); nothing was done: it is taken over only once it expires unrenewed"
    )
    assert.include(new LockError({ ...lease, owner: { pid: 7, host: "ci-1", startedAt: owner.startedAt } }).message, "(pid 7 on ci-1, until unknown);")
    const lost = "stopped without writing to the remote, so that no two loops work on one change; see spool ralph --status --change 001-01_a --remote origin"
    assert.strictEqual(
      new LockLostError({ ...lease, reason: "TakenOver", owner }).message,
      `the loop on 001-01_a lost its lease on origin to another loop (now pid 7 on ci-1) and ${lost}`
    )
    assert.strictEqual(new LockLostError({ ...lease, reason: "Removed", owner: null }).message, `the loop on 001-01_a lost its lease on origin to another loop and ${lost}`)
  })

  it.effect("reads a lock that carries an expiry, and a local lock neither writes one nor lets a past one free a live owner's change", () =>
    Effect.gen(function*() {
      const root = workspace()
      const owner = { pid: 200, host: "here", startedAt: "2026-01-02T03:04:05.000Z", expiresAt: "2026-01-02T03:05:05.000Z" }
      writeLock(root, "001-01_a", owner)
      const seen = yield* withLock(root, identity(100), Effect.gen(function*() {
        const refused = yield* Effect.flip(Effect.scoped(acquire("001-01_a")))
        const live = yield* Effect.flatMap(LoopLock, (lock) => lock.liveLoops)
        return { refused, live }
      }))
      assert.deepInclude(seen.refused, { _tag: "LockError", owner })
      assert.deepStrictEqual(seen.live, [{ changeId: a, owner }])
      const own = yield* withLock(root, identity(100), Effect.scoped(Effect.zipRight(acquire("001-02_b"), Effect.sync(() => readLock(root, "001-02_b")))))
      assert.notProperty(own, "expiresAt")
    }))

  it.effect("records its start from the clock", () =>
    Effect.gen(function*() {
      const root = workspace()
      yield* TestClock.setTime(Date.UTC(2026, 10, 1, 9, 30, 0, 250))
      const seen = yield* withLock(root, identity(100), takeA(root))
      assert.strictEqual(seen.owner.startedAt, "2026-11-01T09:30:00.250Z")
    }))

  it.effect("names its temporary files from Random: the same seed, the same names", () =>
    Effect.gen(function*() {
      const names = (seed: number) =>
        Effect.gen(function*() {
          const root = workspace()
          const written: Array<string> = []
          yield* withFileSystem(
            root,
            identity(100),
            (real) => ({
              writeFileString: (file, data, options) => Effect.zipRight(Effect.sync(() => written.push(path.basename(file))), real.writeFileString(file, data, options))
            }),
            Effect.scoped(acquire("001-01_a"))
          ).pipe(Effect.withRandom(Random.make(seed)))
          return written
        })
      const first = yield* names(7)
      assert.strictEqual(first.length, 1)
      assert.match(first[0]!, /^\.lock\.100\.[0-9a-z]+$/)
      assert.deepStrictEqual(yield* names(7), first)
      assert.notDeepEqual(yield* names(8), first)
    }))
})
