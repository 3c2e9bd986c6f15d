import {
  branchOf,
  CheckRunner,
  type CheckRun,
  describeCheck,
  describeMerge,
  HistoryStore,
  makeRedactor,
  type MergeNote,
  Merges,
  oneLine,
  Workspace,
  Worktrees
} from "@spool/core"
import type { CommandExecutor, FileSystem } from "@effect/platform"
import { GitRemoteHome } from "@spool/git"
import { type Context, Effect, Option, Ref } from "effect"
import { Invocation } from "../host/Invocation.js"
import { secretEnv } from "../notices/Notices.js"
import { Reports } from "../report/Reports.js"
import type { PreparedLoop } from "../run/PreparedLoop.js"
import { walledChecks } from "../sandbox/Walls.js"

/** What a change completed in a `--merge` sweep is until its merge is made: a sweep that ends first leaves it so. */
export const awaitingMerge: MergeNote = { merged: false, text: "not merged: the sweep ended before its merge" }

/**
 * Keeps what became of a change's merge in its loop's state, so that `--status`, `--list` and the
 * next `--merge` sweep know it; a state that cannot be written is warned of, the merge stands.
 */
export const rememberMerge = (changeId: string, merge: MergeNote) =>
  Effect.gen(function*() {
    const history = yield* HistoryStore
    const id = (yield* (yield* Workspace).resolveChange(changeId)).id
    const state = Option.getOrNull(yield* history.readState(id))
    if (state !== null) yield* history.writeState(id, { ...state, merge })
  }).pipe(
    Effect.catchAll((error) =>
      Effect.flatMap(Reports, (reports) => reports.warn(`${changeId}: its state does not say what became of its merge: ${oneLine(error.message, 160)}`))
    )
  )

/**
 * Brings a change's branch and state from `remote`, so that work a loop completed in another clone
 * can be merged here; what cannot be fetched leaves the change not merged, and says why.
 */
export const fetchBranch = (changeId: string, remote: string) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const { env } = yield* Invocation
    const id = (yield* workspace.resolveChange(changeId)).id
    const home = yield* GitRemoteHome.make({ root: workspace.root, remote, env, stateDir: workspace.stateDir })
    yield* workspace.ensureStateDir(id)
    yield* home.pull(id)
    return null
  }).pipe(Effect.catchAll((error) => Effect.succeed<MergeNote>({ merged: false, text: `not merged: ${oneLine(error.message, 160)}` })))

/**
 * The project's checks on a merged tree, in order: null when they all pass, else the one that
 * failed, kept in `failed`. With `--sandbox` they run behind the walls of checks, as in the loop.
 */
const checksPass = <R>(unwalled: CheckRunner["Type"], context: Context.Context<R>, prepared: PreparedLoop, changeId: string, failed: Ref.Ref<CheckRun | null>) => (cwd: string) =>
  Effect.gen(function*() {
    const checks = prepared.walls === null ? unwalled : yield* walledChecks(prepared.walls, cwd)
    for (const command of prepared.options.verify) {
      const result = yield* checks.run({
        command,
        cwd,
        timeoutMs: prepared.options.verifyTimeoutMs,
        env: { SPOOL_CHANGE: changeId, SPOOL_MERGE: "1" }
      })
      if (!result.passed) return yield* Ref.set(failed, result).pipe(Effect.as(oneLine(command, 80)))
    }
    return null
  }).pipe(Effect.scoped, Effect.provide(context))

/** A check that failed on the merged tree, and what it printed (its head and tail, as the runner keeps them), secrets hidden. */
const checkOutput = (changeId: string, run: CheckRun, redact: (text: string) => string) => {
  const output = redact(run.output).trimEnd()
  const head = `${changeId}: ${oneLine(run.command, 80)} on the merged tree: ${describeCheck(run)}`
  return output === "" ? `${head}, with no output` : `${head}; its output:\n${output}`
}

/**
 * Brings a completed change home; its worktree goes once merged (its branch stays). What became of
 * it is kept in the change's state; a check that failed on the merged tree shows its output.
 */
export const mergeChange = (prepared: PreparedLoop, base: string) => (changeId: string) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const reports = yield* Reports
    const failed = yield* Ref.make<CheckRun | null>(null)
    const branch = branchOf(changeId)
    yield* reports.print(`merging ${branch} into ${base}${prepared.options.verify.length > 0 ? " and checking the merged tree" : ""}`)
    const context = yield* Effect.context<CommandExecutor.CommandExecutor | FileSystem.FileSystem | Invocation | Workspace>()
    const checks = checksPass(yield* CheckRunner, context, prepared, changeId, failed)
    const result = yield* (yield* Merges).merge({ root: workspace.root, branch, base, check: checks })
    if (result._tag === "Merged" || result._tag === "AlreadyMerged") {
      yield* (yield* Worktrees).remove({ root: workspace.root, changeId }).pipe(Effect.ignore)
    }
    const note: MergeNote = { merged: result._tag === "Merged" || result._tag === "AlreadyMerged", text: describeMerge(result, base) }
    yield* reports.print(`${changeId}: ${note.text}`)
    const check = yield* Ref.get(failed)
    if (result._tag === "ChecksFailed" && check !== null) {
      const invocation = yield* Invocation
      yield* reports.print(checkOutput(changeId, check, makeRedactor(secretEnv(invocation.env, prepared.secrets))))
    }
    return note
  }).pipe(
    Effect.catchAll((error) => Effect.succeed<MergeNote>({ merged: false, text: `not merged: ${oneLine(error.message, 160)}` })),
    Effect.tap((note) => rememberMerge(changeId, note))
  )
