import { FileSystem } from "@effect/platform"
import { branchOf, type ChangeId, Lease, type LeaseView, type Pulled, RemoteError, RemoteHome } from "@spool/core"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import * as Path from "node:path"
import { directoryOf } from "./GitWorktree.js"
import { looseObjects, type ObjectStore } from "./LooseObjects.js"
import { remoteGit, type RemoteGitOptions } from "./RemoteGit.js"

export { hideCredentials } from "./RemoteGit.js"

/** Where a change's loop lives on the remote, beside its branch `spool/<change-id>`. */
export const stateRefOf = (changeId: string) => `refs/spool/state/${changeId}`
export const leaseRefOf = (changeId: string) => `refs/spool/lease/${changeId}`
const branchRefOf = (changeId: string) => `refs/heads/${branchOf(changeId)}`

/** The state files that travel: everything in the change's state directory but the lock, temporary files and logs. */
const travels = (name: string) => name !== "lock" && !name.startsWith(".")

export const decodeLease = Schema.decodeUnknownOption(Schema.parseJson(Lease))

/** What the repository needs to keep a change's loop on `remote`. */
export interface RemoteHomeOptions extends RemoteGitOptions {
  /** The change's state directory. */
  readonly stateDir: (changeId: ChangeId) => string
}

/**
 * A change's loop on a git remote: the branch `spool/<change-id>`, the loop's state as commits of
 * `refs/spool/state/<change-id>` (a history of its own, apart from the change's commits) and the
 * lease as `refs/spool/lease/<change-id>`, a commit whose message says who holds it until when.
 * Every write of the lease is `git push --force-with-lease` of that ref alone; the branch is only
 * ever pushed as a fast-forward, in one `--atomic` push with the state and the lease's renewal.
 * Every git command is interruptible and bounded (`RemoteGit`); files go through `FileSystem`.
 */
export const make = (options: RemoteHomeOptions): Effect.Effect<RemoteHome["Type"], never, FileSystem.FileSystem> =>
  Effect.map(FileSystem.FileSystem, (fs) => {
    const { root, remote } = options
    const run = remoteGit(options)
    const { must, failed } = run
    const git = (args: ReadonlyArray<string>, input?: string | Uint8Array, cwd?: string) => run.git(`git ${args[0] ?? ""}`, args, input, cwd)
    const local = (action: string, args: ReadonlyArray<string>, input?: string | Uint8Array) => must(action, args, input)
    const files = <A>(action: string, effect: Effect.Effect<A, unknown>) =>
      Effect.mapError(effect, (error) => new RemoteError({ remote, action, detail: error instanceof Error ? error.message : String(error) }))
    const revOrNull = (ref: string) =>
      Effect.map(git(["rev-parse", "--verify", "-q", `${ref}^{commit}`]), (ran) => (ran.exitCode === 0 ? ran.stdout.toString("utf8").trim() : null))
    const commitTime = Effect.map(Clock.currentTimeMillis, (now) => `${Math.floor(now / 1000)} +0000`)

    /** The remote's values of `refs`, by name (one round trip). */
    const remoteRefs = (action: string, refs: ReadonlyArray<string>) =>
      Effect.map(must(action, ["ls-remote", remote, ...refs]), (out) => {
        const found = new Map<string, string>()
        for (const line of out.split("\n")) {
          const [sha, ref] = line.split("\t")
          if (sha !== undefined && ref !== undefined) found.set(ref, sha)
        }
        return found
      })

    /** The state files that travel, by name, each a regular file of the change's state directory. */
    const stateFiles = (changeId: ChangeId) =>
      files("write the loop's state", Effect.gen(function*() {
        const dir = options.stateDir(changeId)
        const names: Array<string> = []
        for (const name of (yield* fs.readDirectory(dir)).sort()) {
          if (travels(name) && (yield* fs.stat(Path.join(dir, name))).type === "File") names.push(name)
        }
        return yield* Effect.forEach(names, (name) => Effect.map(fs.readFile(Path.join(dir, name)), (content) => ({ name, content })))
      }))

    /** The last state commit of each change, once known: the parent of the next. */
    const lastState = new Map<string, string | null>()
    const parentOf = (changeId: ChangeId) =>
      lastState.has(changeId) ? Effect.succeed(lastState.get(changeId)!) : revOrNull(stateRefOf(changeId))

    /** The repository's object store, written directly when it is a SHA-1 one (read once); null otherwise. */
    let store: ObjectStore | null | undefined
    const objectStore = Effect.suspend(() =>
      store !== undefined ? Effect.succeed(store) : Effect.gen(function*() {
        const format = (yield* git(["rev-parse", "--show-object-format"])).stdout.toString("utf8").trim()
        const objects = yield* local("find the object store", ["rev-parse", "--path-format=absolute", "--git-path", "objects"])
        store = format === "sha1" ? looseObjects(objects) : null
        return store
      })
    )

    type Wanted = { readonly state: boolean; readonly lease: Lease | null }

    /**
     * Writes a commit of the change's state files after the last one (when `state` is given) and a
     * commit of `lease` (when given): their names. A process for each object, tree and commit would
     * cost a push several times over: SHA-1 objects are written directly, others in one `git fast-import`.
     */
    const writeCommits = (changeId: ChangeId, wanted: Wanted) =>
      Effect.flatMap(objectStore, (store) => store === null ? writeCommitsByGit(changeId, wanted) : writeCommitsDirectly(store, changeId, wanted))

    /** The state's commit and the lease's, written as objects: no process at all. */
    const writeCommitsDirectly = (store: ObjectStore, changeId: ChangeId, wanted: Wanted) =>
      Effect.gen(function*() {
        const when = yield* commitTime
        let state: string | null = null
        if (wanted.state) {
          const found = yield* stateFiles(changeId)
          const parent = yield* parentOf(changeId)
          state = yield* files("write the loop's state", Effect.try(() => {
            const tree = store.tree(found.map(({ name, content }) => ({ name, blob: store.blob(content) })))
            return store.commit({ tree, parent, message: `spool: the loop's state of ${changeId}`, when })
          }))
        }
        const lease = wanted.lease === null ? null : yield* files("write the lease", Effect.try(() =>
          store.commit({ tree: store.tree([]), parent: null, message: JSON.stringify(wanted.lease), when })
        ))
        return { state, lease }
      })

    const writeCommitsByGit = (changeId: ChangeId, wanted: Wanted) =>
      Effect.gen(function*() {
        const chunks: Array<Uint8Array> = []
        const text = (line: string) => chunks.push(Buffer.from(line, "utf8"))
        const data = (bytes: Uint8Array) => {
          text(`data ${bytes.length}\n`)
          chunks.push(bytes)
          text("\n")
        }
        const when = yield* commitTime
        const marks: Array<"state" | "lease"> = []
        if (wanted.state) {
          const found = (yield* stateFiles(changeId)).filter(({ name }) => /^[\w.@+-]+$/.test(name))
          const parent = yield* parentOf(changeId)
          text(`commit refs/spool/pending/${changeId}/state\nmark :1\ncommitter spool <spool@localhost> ${when}\n`)
          data(Buffer.from(`spool: the loop's state of ${changeId}`, "utf8"))
          if (parent !== null) text(`from ${parent}\n`)
          text("deleteall\n")
          for (const { name, content } of found) {
            text(`M 100644 inline ${name}\n`)
            data(content)
          }
          text("\n")
          marks.push("state")
        }
        if (wanted.lease !== null) {
          text(`commit refs/spool/pending/${changeId}/lease\nmark :2\ncommitter spool <spool@localhost> ${when}\n`)
          data(Buffer.from(JSON.stringify(wanted.lease), "utf8"))
          text("deleteall\n\n")
          marks.push("lease")
        }
        for (const mark of marks) text(`get-mark :${mark === "state" ? 1 : 2}\n`)
        const out = yield* local("write the loop's state", ["fast-import", "--quiet", "--force", "--done"], Buffer.concat([...chunks, Buffer.from("done\n")]))
        const shas = out.split("\n").map((line) => line.trim()).filter((line) => /^[0-9a-f]{40,64}$/.test(line))
        return { state: marks.includes("state") ? shas[0]! : null, lease: marks.includes("lease") ? shas[marks.indexOf("lease")]! : null }
      })
    const leaseCommit = (changeId: ChangeId, lease: Lease) => Effect.map(writeCommits(changeId, { state: false, lease }), (written) => written.lease!)

    /**
     * Pushes `refspecs`, all or nothing, while the remote's lease of `changeId` is `expected`; none
     * when the lease was not (the push is refused as stale), an error for any other refusal.
     */
    const pushLeased = (action: string, changeId: ChangeId, expected: string | null, refspecs: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const lease = leaseRefOf(changeId)
        const ran = yield* run.git(action, ["push", "--porcelain", "--atomic", "--no-verify", `--force-with-lease=${lease}:${expected ?? ""}`, remote, ...refspecs])
        if (ran.exitCode === 0) return true
        // Refused: because the lease is not what was expected (stale when the push began, or changed
        // by another push in the moment it took), or for another reason. The remote's lease says which.
        const now = (yield* remoteRefs(action, [lease])).get(lease) ?? null
        if (now !== expected) return false
        return yield* failed(action, ran)
      })

    const readLease = (changeId: ChangeId, tries = 5): Effect.Effect<LeaseView, RemoteError> =>
      Effect.gen(function*() {
        const action = `read the lease of ${changeId}`
        const ref = leaseRefOf(changeId)
        const seen = `refs/spool/seen/lease/${changeId}`
        if (!(yield* remoteRefs(action, [ref])).has(ref)) return { _tag: "Free" } satisfies LeaseView
        // The lease moves at every renewal and goes at the end: what counts is the version fetched,
        // not the one listed a moment before.
        const fetched = yield* run.git(action, ["fetch", "--no-tags", "-q", remote, `+${ref}:${seen}`])
        if (fetched.exitCode !== 0) {
          // Given up between the listing and the fetch (and perhaps taken again since): read it afresh.
          if (!(yield* remoteRefs(action, [ref])).has(ref)) return { _tag: "Free" } satisfies LeaseView
          if (tries > 1) return yield* readLease(changeId, tries - 1)
          return yield* failed(action, fetched)
        }
        const version = yield* local(action, ["rev-parse", seen])
        const message = yield* local(action, ["log", "-1", "--format=%B", version])
        return { _tag: "Held", version, lease: Option.getOrNull(decodeLease(message)) } satisfies LeaseView
      })

    const swapLease = (changeId: ChangeId, next: Lease | null, expected: string | null) =>
      Effect.gen(function*() {
        if (next === null && expected === null) return Option.some("")
        const sha = next === null ? "" : yield* leaseCommit(changeId, next)
        const done = yield* pushLeased(next === null ? "give up the lease" : "write the lease", changeId, expected, [`${sha}:${leaseRefOf(changeId)}`])
        return done ? Option.some(sha) : Option.none()
      })

    /** The work tree that has the change's branch checked out, if any. */
    const worktreeOf = (changeId: ChangeId) => {
      const dir = directoryOf(root, changeId)
      return Effect.map(Effect.option(fs.stat(dir)), (info) => (Option.isSome(info) && info.value.type === "Directory" ? dir : null))
    }

    /**
     * Moves the local branch to the remote's tip; commits only this clone has are kept on a branch of
     * their own, which the note returned names.
     */
    const followRemote = (changeId: ChangeId, tip: string) =>
      Effect.gen(function*() {
        const ref = branchRefOf(changeId)
        const mine = yield* revOrNull(ref)
        if (mine === tip) return null
        const worktree = yield* worktreeOf(changeId)
        let note: string | null = null
        if (mine !== null) {
          const behind = (yield* git(["merge-base", "--is-ancestor", mine, tip])).exitCode === 0
          if (!behind) {
            const aside = `${branchOf(changeId)}-unpushed-${mine.slice(0, 12)}`
            yield* local("keep unpushed commits", ["update-ref", `refs/heads/${aside}`, mine])
            note = `branch ${branchOf(changeId)} here had commits the remote does not (never pushed, or from a loop whose lease was lost): ` +
              `kept on branch ${aside}; the loop goes on from the remote's`
          }
        }
        if (worktree !== null) {
          // Anything a stopped sitting left uncommitted there belongs to no recorded iteration.
          yield* must("check out the remote's branch", ["reset", "--hard", "-q", tip], undefined, worktree)
          yield* must("check out the remote's branch", ["clean", "-fdq"], undefined, worktree)
        } else {
          yield* local("follow the remote's branch", ["update-ref", ref, tip])
        }
        return note
      })

    /** Replaces the change's local state with the tree of the remote's state commit. */
    const restoreState = (changeId: ChangeId, commit: string) =>
      Effect.gen(function*() {
        const action = "read the loop's state"
        const dir = options.stateDir(changeId)
        yield* files(action, fs.makeDirectory(dir, { recursive: true }))
        const names = (yield* local(action, ["ls-tree", "--name-only", commit])).split("\n").filter((name) => name !== "" && travels(name))
        for (const name of names) {
          // The file as it was, byte for byte, written whole beside it and then moved into place.
          const content = yield* run.bytes(action, ["cat-file", "blob", `${commit}:${name}`])
          const tmp = Path.join(dir, `.${name}.pull`)
          yield* files(action, Effect.zipRight(fs.writeFile(tmp, content), fs.rename(tmp, Path.join(dir, name))))
        }
        for (const name of yield* files(action, fs.readDirectory(dir))) {
          if (!travels(name) || names.includes(name)) continue
          const file = Path.join(dir, name)
          if ((yield* files(action, fs.stat(file))).type === "File") yield* files(action, fs.remove(file))
        }
        yield* local("keep the loop's state", ["update-ref", stateRefOf(changeId), commit])
      })

    const pull = (changeId: ChangeId) =>
      Effect.gen(function*() {
        const branch = branchRefOf(changeId)
        const state = stateRefOf(changeId)
        const there = yield* remoteRefs(`fetch ${changeId}`, [branch, state])
        const branchTip = there.get(branch)
        const stateTip = there.get(state)
        const refspecs = [
          ...(branchTip === undefined ? [] : [`+${branch}:refs/remotes/${remote}/${branchOf(changeId)}`]),
          ...(stateTip === undefined ? [] : [`+${state}:refs/spool/seen/state/${changeId}`])
        ]
        if (refspecs.length > 0) yield* must(`fetch ${changeId}`, ["fetch", "--no-tags", "-q", remote, ...refspecs])
        const note = branchTip === undefined ? null : yield* followRemote(changeId, branchTip)
        if (stateTip !== undefined) yield* restoreState(changeId, stateTip)
        // The next state commit follows the remote's (or starts a history of its own there).
        lastState.set(changeId, stateTip ?? null)
        return { branch: branchTip !== undefined, state: stateTip !== undefined, notes: note === null ? [] : [note] } satisfies Pulled
      })

    const push = (changeId: ChangeId, next: Lease, expected: string) =>
      Effect.gen(function*() {
        const written = yield* writeCommits(changeId, { state: true, lease: next })
        // The loop's worktree has the branch: it goes by its name, a fast-forward or refused.
        const done = yield* pushLeased(`push ${branchOf(changeId)}`, changeId, expected, [
          `${branchRefOf(changeId)}:${branchRefOf(changeId)}`,
          `${written.state}:${stateRefOf(changeId)}`,
          `${written.lease}:${leaseRefOf(changeId)}`
        ])
        if (!done) return Option.none<string>()
        lastState.set(changeId, written.state)
        return Option.some(written.lease!)
      })

    return { remote, readLease, swapLease, pull, push } satisfies RemoteHome["Type"]
  })

/** The change's loop kept on `remote`. */
export const layer = (options: RemoteHomeOptions) => Layer.effect(RemoteHome, make(options))

/** Whether the repository at `root` has a remote named `name`. */
export const hasRemote = (options: RemoteGitOptions) =>
  Effect.map(remoteGit(options).git("find the remote", ["remote", "get-url", options.remote]), (ran) => ran.exitCode === 0)
