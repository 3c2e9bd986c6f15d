import { FileSystem } from "@effect/platform"
import { type ApprovalNote, type LeaseView, RemoteError, shapes, type TreeShape, WORK_DIR } from "@spool/core"
import { Effect, Option } from "effect"
import * as Path from "node:path"
import { decodeApproval } from "./GitApproval.js"
import { decodeLease } from "./GitRemoteHome.js"
import { remoteGit, type RemoteGitOptions } from "./RemoteGit.js"

/** What the remote holds of every change's loop, as a directory laid out as the repository's tree. */
export interface RemoteSnapshot {
  /** A temporary directory holding the tree: the repository's changes and modules, each change's documents as its branch on the remote has them, and the loops' state from the remote. */
  readonly root: string
  /** The lease of each change that has one on the remote. */
  readonly leases: ReadonlyMap<string, LeaseView>
  /** A person's word on the merge of each change that has one on the remote (`--approve`). */
  readonly approvals: ReadonlyMap<string, ApprovalNote>
}

/**
 * Reads the remote in one fetch: every change's branch, state and lease. The caller removes the
 * snapshot's directory when done with it (`remove`).
 */
export const snapshot = (options: RemoteGitOptions & { readonly tree?: TreeShape }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { root, remote } = options
    const tree = options.tree ?? shapes.spool
    const at = (base: string, relative: string) => Path.join(base, ...relative.split("/"))
    const git = remoteGit(options)
    const run = (action: string, args: ReadonlyArray<string>) =>
      Effect.flatMap(git.git(action, args), (ran) =>
        ran.exitCode === 0 ? Effect.succeed(ran.stdout.toString("utf8")) : Effect.fail(git.failed(action, ran, 2)))
    const files = <A>(effect: Effect.Effect<A, unknown>) =>
      Effect.mapError(effect, (error) => new RemoteError({ remote, action: "read the remote's loops", detail: error instanceof Error ? error.message : String(error) }))
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
          Effect.forEach([...refs.keys()], (ref) => Effect.ignore(run("fetch the loops", ["fetch", "--no-tags", "-q", remote, `+${ref}:${seenOf(ref)}`])))
        )
      )
      for (const ref of [...refs.keys()]) {
        const fetchedSha = yield* run("fetch the loops", ["rev-parse", "--verify", "-q", seenOf(ref)]).pipe(Effect.orElseSucceed(() => ""))
        if (fetchedSha.trim() === "") refs.delete(ref)
        else refs.set(ref, fetchedSha.trim())
      }
    }
    const prefix = (yield* run(`find ${tree.dir}/`, ["rev-parse", "--show-prefix"])).trim()
    const dir = yield* files(fs.makeTempDirectory({ prefix: "spool-remote-" }))
    const fill = Effect.gen(function*() {
      yield* files(fs.makeDirectory(at(dir, tree.changesDir), { recursive: true }))
      // spec-kit's tree is recognised by `.specify/` beside `specs/`.
      if (tree.layout === "speckit") yield* files(fs.makeDirectory(Path.join(dir, ".specify"), { recursive: true }))
      for (const part of [tree.changesDir, ...(tree.modulesDir === null ? [] : [tree.modulesDir])]) {
        const from = at(root, part)
        if (yield* files(fs.exists(from))) yield* files(fs.copy(from, at(dir, part)))
      }
      /** Writes the files of `treeish` (a commit's path) under `target`. */
      const writeTree = (treeish: string, target: string) =>
        Effect.gen(function*() {
          const names = (yield* run("read the remote's loops", ["ls-tree", "-r", "--name-only", treeish])).split("\n").filter(Boolean)
          for (const name of names) {
            const content = yield* git.bytes("read the remote's loops", ["cat-file", "blob", `${treeish}/${name}`.replace(/^([^:]*):\//, "$1:")])
            yield* files(fs.makeDirectory(Path.dirname(Path.join(target, name)), { recursive: true }))
            yield* files(fs.writeFile(Path.join(target, name), content))
          }
        })
      const leases = new Map<string, LeaseView>()
      const approvals = new Map<string, ApprovalNote>()
      for (const [ref, sha] of refs) {
        const branch = /^refs\/heads\/spool\/(.+)$/.exec(ref)?.[1]
        const state = /^refs\/spool\/state\/(.+)$/.exec(ref)?.[1]
        const lease = /^refs\/spool\/lease\/(.+)$/.exec(ref)?.[1]
        const approval = /^refs\/spool\/approval\/(.+)$/.exec(ref)?.[1]
        if (branch !== undefined) {
          const changeDir = `${prefix}${tree.changesDir}/${branch}`
          const target = at(dir, `${tree.changesDir}/${branch}`)
          const there = (yield* run("read the remote's loops", ["ls-tree", "--name-only", sha, `${changeDir}/`])).trim()
          if (there !== "") {
            yield* files(fs.remove(target, { recursive: true, force: true }))
            yield* writeTree(`${sha}:${changeDir}`, target)
          }
        } else if (state !== undefined) {
          yield* writeTree(`${sha}:`, at(dir, `${tree.ralphDir}/${state}`))
        } else if (lease !== undefined) {
          const message = yield* run("read the remote's loops", ["log", "-1", "--format=%B", sha])
          leases.set(lease, { _tag: "Held", version: sha, lease: Option.getOrNull(decodeLease(message.trim())) })
        } else if (approval !== undefined) {
          const message = yield* run("read the remote's loops", ["log", "-1", "--format=%B", sha])
          const note = decodeApproval(message.trim())
          if (Option.isSome(note)) approvals.set(approval, note.value)
        }
      }
      for (const ignored of [WORK_DIR, ...tree.ignoredDirs]) {
        yield* files(fs.makeDirectory(at(dir, ignored), { recursive: true }))
        yield* files(fs.writeFileString(Path.join(at(dir, ignored), ".gitignore"), "*\n"))
      }
      return { root: dir, leases, approvals } satisfies RemoteSnapshot
    })
    // A snapshot not made whole (an error, an interrupt) leaves no directory behind.
    return yield* Effect.onError(fill, () => remove({ root: dir }))
  })

/** Removes a snapshot's directory. */
export const remove = (made: { readonly root: string }) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.ignore(fs.remove(made.root, { recursive: true, force: true })))
