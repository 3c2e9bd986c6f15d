import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ChangeId } from "../src/Domain.js"
import { type LockIdentity, LoopLock } from "../src/LoopLock.js"
import { Workspace } from "../src/Workspace.js"

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
})
