import { branchOf, type ChangeId, Lease, type LeaseView, type Pulled, RemoteError, RemoteHome, shapes, type TreeShape, WORK_DIR } from "@spool/core"
import { Effect, Layer, Option, Schema } from "effect"
import { execFile } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { directoryOf } from "./GitWorktree.js"
import { looseObjects, type ObjectStore } from "./LooseObjects.js"

/** Where a change's loop lives on the remote, beside its branch `spool/<change-id>`. */
export const stateRefOf = (changeId: string) => `refs/spool/state/${changeId}`
export const leaseRefOf = (changeId: string) => `refs/spool/lease/${changeId}`
const branchRefOf = (changeId: string) => `refs/heads/${branchOf(changeId)}`

/** The state files that travel: everything in the change's state directory but the lock, temporary files and logs. */
const travels = (name: string) => name !== "lock" && !name.startsWith(".")


interface Ran {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

const decodeLease = Schema.decodeUnknownOption(Schema.parseJson(Lease))

/** A URL's user and password (`https://user:token@host/...`), which git's messages may carry, hidden. */
export const hideCredentials = (text: string) => text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, "$1[REDACTED]@")

/** What the repository needs to keep a change's loop on `remote`. */
export interface RemoteHomeOptions {
  /** The directory holding `.spool/` (where the main work tree's git runs). */
  readonly root: string
  readonly remote: string
  /** The change's state directory. */
  readonly stateDir: (changeId: ChangeId) => string
}

/**
 * A change's loop on a git remote: the branch `spool/<change-id>`, the loop's state as commits of
 * `refs/spool/state/<change-id>` (a history of its own, apart from the change's commits) and the
 * lease as `refs/spool/lease/<change-id>`, a commit whose message says who holds it until when.
 * Every write of the lease is `git push --force-with-lease` of that ref alone; the branch is only
 * ever pushed as a fast-forward, in one `--atomic` push with the state and the lease's renewal.
 */
export const make = (options: RemoteHomeOptions): RemoteHome["Type"] => {
  const { root, remote } = options
  const git = (args: ReadonlyArray<string>, input?: string | Uint8Array, cwd = root) =>
    Effect.async<Ran>((resume) => {
      const child = execFile("git", [...args], { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resume(Effect.succeed({ exitCode: code, stdout: String(stdout), stderr: String(stderr) }))
      })
      if (input !== undefined) child.stdin?.end(input)
    })
  const failed = (action: string, ran: Ran) =>
    new RemoteError({
      remote,
      action,
      detail: hideCredentials((ran.stderr.trim() || ran.stdout.trim() || `git exited with code ${ran.exitCode}`).split("\n").slice(-3).join("; "))
    })
  /** The output of a command that must succeed. */
  const must = (action: string, args: ReadonlyArray<string>, input?: string | Uint8Array, cwd?: string) =>
    Effect.flatMap(git(args, input, cwd), (ran) => (ran.exitCode === 0 ? Effect.succeed(ran.stdout.trim()) : Effect.fail(failed(action, ran))))
  const local = (action: string, args: ReadonlyArray<string>, input?: string | Uint8Array) => must(action, args, input)
  const revOrNull = (ref: string) =>
    Effect.map(git(["rev-parse", "--verify", "-q", `${ref}^{commit}`]), (ran) => (ran.exitCode === 0 ? ran.stdout.trim() : null))

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

  /** The last state commit of each change, once known: the parent of the next. */
  const lastState = new Map<string, string | null>()
  const parentOf = (changeId: ChangeId) =>
    lastState.has(changeId) ? Effect.succeed(lastState.get(changeId)!) : revOrNull(stateRefOf(changeId))

  /**
   * Writes, in one `git fast-import`, a commit of the change's state files after the last one (when
   * `state` is given) and a commit of `lease` (when given): their names. A process for each object,
   * tree and commit would cost a push several times over.
   */
  const writeCommits = (changeId: ChangeId, wanted: { readonly state: boolean; readonly lease: Lease | null }) =>
    Effect.flatMap(objectStore, (store) => store === null ? writeCommitsByGit(changeId, wanted) : writeCommitsDirectly(store, changeId, wanted))

  /** The repository's object store, written directly when it is a SHA-1 one (read once); null otherwise. */
  let store: ObjectStore | null | undefined
  const objectStore = Effect.suspend(() =>
    store !== undefined ? Effect.succeed(store) : Effect.gen(function*() {
      const format = (yield* git(["rev-parse", "--show-object-format"])).stdout.trim()
      const objects = yield* local("find the object store", ["rev-parse", "--path-format=absolute", "--git-path", "objects"])
      store = format === "sha1" ? looseObjects(objects) : null
      return store
    })
  )

  /** The state's commit and the lease's, written as objects: no process at all. */
  const writeCommitsDirectly = (store: ObjectStore, changeId: ChangeId, wanted: { readonly state: boolean; readonly lease: Lease | null }) =>
    Effect.gen(function*() {
      const when = `${Math.floor(Date.now() / 1000)} +0000`
      let state: string | null = null
      if (wanted.state) {
        const dir = options.stateDir(changeId)
        const names = readdirSync(dir).filter((name) => travels(name) && statSync(Path.join(dir, name)).isFile())
        const tree = store.tree(names.map((name) => ({ name, blob: store.blob(readFileSync(Path.join(dir, name))) })))
        state = store.commit({ tree, parent: yield* parentOf(changeId), message: `spool: the loop's state of ${changeId}`, when })
      }
      const lease = wanted.lease === null ? null : store.commit({ tree: store.tree([]), parent: null, message: JSON.stringify(wanted.lease), when })
      return { state, lease }
    })

  const writeCommitsByGit = (changeId: ChangeId, wanted: { readonly state: boolean; readonly lease: Lease | null }) =>
    Effect.gen(function*() {
      const chunks: Array<Uint8Array> = []
      const text = (line: string) => chunks.push(Buffer.from(line, "utf8"))
      const data = (bytes: Uint8Array) => {
        text(`data ${bytes.length}\n`)
        chunks.push(bytes)
        text("\n")
      }
      const when = `${Math.floor(Date.now() / 1000)} +0000`
      const marks: Array<"state" | "lease"> = []
      if (wanted.state) {
        const dir = options.stateDir(changeId)
        const names = readdirSync(dir).filter((name) => travels(name) && /^[\w.@+-]+$/.test(name) && statSync(Path.join(dir, name)).isFile()).sort()
        const parent = yield* parentOf(changeId)
        text(`commit refs/spool/pending/${changeId}/state\nmark :1\ncommitter spool <spool@localhost> ${when}\n`)
        data(Buffer.from(`spool: the loop's state of ${changeId}`, "utf8"))
        if (parent !== null) text(`from ${parent}\n`)
        text("deleteall\n")
        for (const name of names) {
          text(`M 100644 inline ${name}\n`)
          data(readFileSync(Path.join(dir, name)))
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
      const ran = yield* git([
        "push",
        "--porcelain",
        "--atomic",
        "--no-verify",
        `--force-with-lease=${lease}:${expected ?? ""}`,
        remote,
        ...refspecs
      ])
      if (ran.exitCode === 0) return true
      // Refused: because the lease is not what was expected (stale when the push began, or changed
      // by another push in the moment it took), or for another reason. The remote's lease says which.
      const now = (yield* remoteRefs(action, [lease])).get(lease) ?? null
      if (now !== expected) return false
      return yield* failed(action, ran)
    })

  const readLease = (changeId: ChangeId, tries = 5): Effect.Effect<LeaseView, RemoteError> =>
    Effect.gen(function*() {
      const ref = leaseRefOf(changeId)
      const seen = `refs/spool/seen/lease/${changeId}`
      if (!(yield* remoteRefs(`read the lease of ${changeId}`, [ref])).has(ref)) return { _tag: "Free" } satisfies LeaseView
      // The lease moves at every renewal and goes at the end: what counts is the version fetched,
      // not the one listed a moment before.
      const fetched = yield* git(["fetch", "--no-tags", "-q", remote, `+${ref}:${seen}`])
      if (fetched.exitCode !== 0) {
        // Given up between the listing and the fetch (and perhaps taken again since): read it afresh.
        if (!(yield* remoteRefs(`read the lease of ${changeId}`, [ref])).has(ref)) return { _tag: "Free" } satisfies LeaseView
        if (tries > 1) return yield* readLease(changeId, tries - 1)
        return yield* failed(`read the lease of ${changeId}`, fetched)
      }
      const version = yield* local(`read the lease of ${changeId}`, ["rev-parse", seen])
      const message = yield* local(`read the lease of ${changeId}`, ["log", "-1", "--format=%B", version])
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
    try {
      return statSync(dir).isDirectory() ? dir : null
    } catch {
      return null
    }
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
      const worktree = worktreeOf(changeId)
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
      const dir = options.stateDir(changeId)
      mkdirSync(dir, { recursive: true })
      const names = (yield* local("read the loop's state", ["ls-tree", "--name-only", commit])).split("\n").filter((name) => name !== "" && travels(name))
      for (const name of names) {
        // The file as it was, byte for byte (a command's output is otherwise trimmed).
        const read = yield* git(["cat-file", "blob", `${commit}:${name}`])
        if (read.exitCode !== 0) return yield* failed("read the loop's state", read)
        const tmp = Path.join(dir, `.${name}.pull`)
        writeFileSync(tmp, read.stdout)
        renameSync(tmp, Path.join(dir, name))
      }
      for (const name of readdirSync(dir)) {
        if (travels(name) && !names.includes(name) && statSync(Path.join(dir, name)).isFile()) rmSync(Path.join(dir, name))
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

  return { remote, readLease, swapLease, pull, push }
}

/** The change's loop kept on `remote`. */
export const layer = (options: RemoteHomeOptions) => Layer.succeed(RemoteHome, make(options))

/** Whether the repository at `root` has a remote named `name`. */
export const hasRemote = (root: string, name: string) =>
  Effect.async<boolean>((resume) => {
    execFile("git", ["remote", "get-url", name], { cwd: root }, (error) => resume(Effect.succeed(error === null)))
  })


/** What the remote holds of every change's loop, as a directory laid out as the repository's tree. */
export interface RemoteSnapshot {
  /** A temporary directory holding the tree: the repository's changes and modules, each change's documents as its branch on the remote has them, and the loops' state from the remote. */
  readonly root: string
  /** The lease of each change that has one on the remote. */
  readonly leases: ReadonlyMap<string, LeaseView>
}

/**
 * Reads the remote in one fetch: every change's branch, state and lease. The caller removes the
 * snapshot's directory when done with it.
 */
export const snapshot = (options: { readonly root: string; readonly remote: string; readonly tree?: TreeShape }) =>
  Effect.gen(function*() {
    const { root, remote } = options
    const tree = options.tree ?? shapes.spool
    const at = (base: string, relative: string) => Path.join(base, ...relative.split("/"))
    const run = (action: string, args: ReadonlyArray<string>) =>
      Effect.async<string, RemoteError>((resume) => {
        execFile("git", [...args], { cwd: root, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } }, (error, stdout, stderr) =>
          resume(
            error === null
              ? Effect.succeed(String(stdout))
              : Effect.fail(new RemoteError({ remote, action, detail: hideCredentials(String(stderr).trim().split("\n").slice(-2).join("; ") || error.message) }))
          ))
      })
    const listed = yield* run("list the loops", ["ls-remote", remote, "refs/spool/*", "refs/heads/spool/*"])
    const refs = new Map(listed.split("\n").filter(Boolean).map((line) => {
      const [sha, ref] = line.split("\t") as [string, string]
      return [ref, sha] as const
    }))
    const seenOf = (ref: string) => `refs/spool/seen/all/${ref.replace(/^refs\//, "")}`
    // What an earlier snapshot fetched goes first, so that nothing of it stands for the remote now.
    const earlier = (yield* run("read the loops", ["for-each-ref", "--format=%(refname)", "refs/spool/seen/all/"])).split("\n").filter(Boolean)
    yield* Effect.forEach(earlier, (ref) => run("read the loops", ["update-ref", "-d", ref]))
    if (refs.size > 0) {
      // Refs that went between the listing and the fetch (a lease given up) are left out; what
      // counts of each is the version fetched, not the one listed a moment before.
      yield* run("fetch the loops", ["fetch", "--no-tags", "-q", remote, ...[...refs.keys()].map((ref) => `+${ref}:${seenOf(ref)}`)]).pipe(
        Effect.catchAll(() =>
          Effect.forEach([...refs.keys()], (ref) =>
            Effect.ignore(run("fetch the loops", ["fetch", "--no-tags", "-q", remote, `+${ref}:${seenOf(ref)}`])))
        )
      )
      for (const ref of [...refs.keys()]) {
        const fetchedSha = yield* run("fetch the loops", ["rev-parse", "--verify", "-q", seenOf(ref)]).pipe(Effect.orElseSucceed(() => ""))
        if (fetchedSha.trim() === "") refs.delete(ref)
        else refs.set(ref, fetchedSha.trim())
      }
    }
    const prefix = (yield* run(`find ${tree.dir}/`, ["rev-parse", "--show-prefix"])).trim()
    const dir = mkdtempSync(Path.join(tmpdir(), "spool-remote-"))
    mkdirSync(at(dir, tree.changesDir), { recursive: true })
    // spec-kit's tree is recognised by `.specify/` beside `specs/`.
    if (tree.layout === "speckit") mkdirSync(Path.join(dir, ".specify"), { recursive: true })
    for (const part of [tree.changesDir, ...(tree.modulesDir === null ? [] : [tree.modulesDir])]) {
      const from = at(root, part)
      if (existsSync(from)) cpSync(from, at(dir, part), { recursive: true })
    }
    /** Writes the files of `tree` (a commit's path) under `target`. */
    const writeTree = (treeish: string, target: string) =>
      Effect.gen(function*() {
        const files = (yield* run("read the remote's loops", ["ls-tree", "-r", "--name-only", treeish])).split("\n").filter(Boolean)
        for (const file of files) {
          const text = yield* run("read the remote's loops", ["cat-file", "blob", `${treeish}/${file}`.replace(/^([^:]*):\//, "$1:")])
          mkdirSync(Path.dirname(Path.join(target, file)), { recursive: true })
          writeFileSync(Path.join(target, file), text)
        }
      })
    const leases = new Map<string, LeaseView>()
    for (const [ref, sha] of refs) {
      const branch = /^refs\/heads\/spool\/(.+)$/.exec(ref)?.[1]
      const state = /^refs\/spool\/state\/(.+)$/.exec(ref)?.[1]
      const lease = /^refs\/spool\/lease\/(.+)$/.exec(ref)?.[1]
      if (branch !== undefined) {
        const changeDir = `${prefix}${tree.changesDir}/${branch}`
        const target = at(dir, `${tree.changesDir}/${branch}`)
        const there = (yield* run("read the remote's loops", ["ls-tree", "--name-only", sha, `${changeDir}/`])).trim()
        if (there !== "") {
          rmSync(target, { recursive: true, force: true })
          yield* writeTree(`${sha}:${changeDir}`, target)
        }
      } else if (state !== undefined) {
        yield* writeTree(`${sha}:`, at(dir, `${tree.ralphDir}/${state}`))
      } else if (lease !== undefined) {
        const message = yield* run("read the remote's loops", ["log", "-1", "--format=%B", sha])
        leases.set(lease, { _tag: "Held", version: sha, lease: Option.getOrNull(decodeLease(message.trim())) })
      }
    }
    for (const ignored of [WORK_DIR, ...tree.ignoredDirs]) {
      mkdirSync(at(dir, ignored), { recursive: true })
      writeFileSync(Path.join(at(dir, ignored), ".gitignore"), "*\n")
    }
    return { root: dir, leases } satisfies RemoteSnapshot
  })
