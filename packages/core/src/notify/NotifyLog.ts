import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import type { ChangeId } from "../domain/Domain.js"
import { appendLine, readFileOrNull } from "../state/AtomicFile.js"
import { Workspace } from "../state/Workspace.js"
import type { NotifyFailure } from "./Notifications.js"

/** The change's notices that could not be told, one line each, beside its state: `--status` shows them. */
export const NOTIFY_LOG = "notifications.log"

/** `2026-11-27T10:00:00.000Z complete webhook 1 (hooks.example.com): 3 tries failed (the last: answered 500); given up` */
export const failureLine = (failure: NotifyFailure) => `${failure.notice.time} ${failure.notice.event} ${failure.target}: ${failure.why}`

/** Keeps a failure in the change's notifications log; a log that cannot be written is left be (the failure was said on stderr). */
export const keepFailure = (changeId: ChangeId, failure: NotifyFailure) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const dir = yield* workspace.ensureStateDir(changeId)
    yield* appendLine(yield* FileSystem.FileSystem, yield* Path.Path, (yield* Path.Path).join(dir, NOTIFY_LOG), failureLine(failure))
  }).pipe(Effect.ignore)

/** The failures kept for the change since `since` (an ISO time, the run's start), oldest first. */
export const recentFailures = (changeId: ChangeId, since: string | null) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const path = yield* Path.Path
    const text = yield* readFileOrNull(yield* FileSystem.FileSystem, path.join(workspace.stateDir(changeId), NOTIFY_LOG)).pipe(
      Effect.orElseSucceed(() => null)
    )
    if (text === null) return []
    // ISO times in one zone sort as text.
    return text.split("\n").filter((line) => line.trim() !== "" && (since === null || line.slice(0, 24) >= since))
  })
