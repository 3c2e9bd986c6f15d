import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { ChangeId, type LoopState } from "../domain/Domain.js"
import { asRecordedNow } from "../loop/LoopFormat.js"
import { HistoryStore, iterationLogName } from "../state/HistoryStore.js"
import { Workspace } from "../state/Workspace.js"
import {
  DASHBOARD_ITERATIONS,
  type DashboardDetail,
  dashboardDetail,
  type DashboardLoop,
  dashboardLoop,
  decodeTail,
  harnessOfLog,
  iterationOutput,
  JOURNAL_TAIL_BYTES,
  journalText,
  OUTPUT_TAIL_BYTES,
  type TextTail,
  unreadableDetail,
  unreadableLoop
} from "./Dashboard.js"
import { loopSummary } from "./LoopSummary.js"
import { liveChanges, loadStatus, withLiveness } from "./StatusReport.js"

const isChangeId = Schema.is(ChangeId)

const describe = (error: unknown) => {
  const message = (error as { readonly message?: unknown }).message
  return typeof message === "string" && message !== "" ? message.split("\n")[0]! : String(error)
}

/** Whether `target` really lies in `dir` (symlinks followed); false when either cannot be resolved. */
const within = (target: string, dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const real = yield* fs.realPath(target)
    const base = yield* fs.realPath(dir)
    return real.startsWith(base.endsWith(path.sep) ? base : base + path.sep)
  }).pipe(Effect.orElseSucceed(() => false))

/**
 * The changes whose loop state the dashboard shows: those with a state directory that really is
 * one, in the tree's state directory (`.spool/.state/ralph/`), not a link to somewhere else.
 */
export const dashboardChanges = Effect.gen(function*() {
  const workspace = yield* Workspace
  const path = yield* Path.Path
  const ids = yield* workspace.changesWithState
  return yield* Effect.filter(ids, (id) => within(workspace.stateDir(id), path.dirname(workspace.stateDir(id))))
})

/** The last `maxBytes` of a file in `dir`, as text; null when it is missing, unreadable or leads outside `dir`. */
const readTail = (dir: string, name: string, maxBytes: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = (yield* Path.Path).join(dir, name)
    if (!(yield* within(file, dir))) return null
    return yield* Effect.scoped(Effect.gen(function*() {
      const handle = yield* fs.open(file, { flag: "r" })
      const size = Number((yield* handle.stat).size)
      const start = Math.max(0, size - maxBytes)
      const bytes = new Uint8Array(size - start)
      yield* handle.seek(FileSystem.Size(start), "start")
      let filled = 0
      while (filled < bytes.length) {
        const read = Number(yield* handle.read(bytes.subarray(filled)))
        if (read === 0) break
        filled += read
      }
      return decodeTail(bytes.subarray(0, filled), start === 0)
    }))
  }).pipe(Effect.orElseSucceed((): TextTail | null => null))

/** Every loop of the repository and its worktrees, in change-id order; one whose files cannot be read says why. */
export const loadDashboardLoops = Effect.gen(function*() {
  const ids = yield* dashboardChanges
  const live = yield* liveChanges
  const loops = yield* Effect.forEach(ids, (id) =>
    loadStatus(id).pipe(
      Effect.map((report) => report.state === null && report.history.length === 0 ? null : dashboardLoop(loopSummary(withLiveness(report, live)))),
      Effect.catchAll((error) => Effect.succeed(unreadableLoop(id, describe(error))))
    ))
  return loops.filter((loop): loop is DashboardLoop => loop !== null)
})

/**
 * One change's page, each text passed through `redact` again; none for an id that is not a
 * change with loop state. `view` turns the agent's logged output into what the harness that ran
 * the iteration showed (a JSON agent's events read as lines; `harnessOfLog`); by default the output
 * is shown as logged.
 */
export const loadDashboardDetail = (
  input: string,
  redact: (text: string) => string,
  view: (state: LoopState, output: string, harness: string | undefined) => string = (_, output) => output
) =>
  Effect.gen(function*() {
    if (!isChangeId(input)) return Option.none<DashboardDetail>()
    const changeId = ChangeId.make(input)
    if (!(yield* dashboardChanges).includes(changeId)) return Option.none<DashboardDetail>()
    const dir = (yield* Workspace).stateDir(changeId)
    const detail = yield* Effect.gen(function*() {
      const status = withLiveness(yield* loadStatus(changeId), yield* liveChanges)
      const { records } = yield* (yield* HistoryStore).recent(changeId, DASHBOARD_ITERATIONS)
      const report = { ...status, history: records.map(asRecordedNow) }
      if (report.state === null && report.history.length === 0) return null
      const journal = journalText((yield* readTail(dir, "errors.md", JOURNAL_TAIL_BYTES)) ?? { text: "", truncated: false })
      const { state } = report
      const log = state === null || state.iteration < 1
        ? null
        : yield* readTail(dir, `logs/${iterationLogName(state.run, state.iteration)}`, OUTPUT_TAIL_BYTES)
      const output = state === null || log === null ? null : iterationOutput(log)
      return dashboardDetail(report, {
        journal: { ...journal, text: redact(journal.text) },
        output: state === null || output === null
          ? null
          : { ...output, text: redact(view(state, output.text, harnessOfLog(state, report.history))), run: state.run, iteration: state.iteration }
      })
    }).pipe(Effect.catchAll((error) => Effect.succeed(unreadableDetail(changeId, describe(error)))))
    return Option.fromNullable(detail)
  })
