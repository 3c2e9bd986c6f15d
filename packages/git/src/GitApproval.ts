import { ApprovalNote } from "@spool/core"
import { Effect, Schema } from "effect"
import { remoteGit, type RemoteGitOptions } from "./RemoteGit.js"

/** Where a person's word on a change's merge lives on the remote, beside its lease: any clone reads it. */
export const approvalRefOf = (changeId: string) => `refs/spool/approval/${changeId}`

export const decodeApproval = Schema.decodeUnknownOption(Schema.parseJson(ApprovalNote))

/**
 * Writes `note` as `refs/spool/approval/<change-id>` on the remote, a commit of no files whose
 * message is the note (as a lease is kept); null removes it. The last word stands: a person's
 * decision replaces what was there.
 */
export const write = (options: RemoteGitOptions, changeId: string, note: ApprovalNote | null) =>
  Effect.gen(function*() {
    const git = remoteGit(options)
    const ref = approvalRefOf(changeId)
    const action = note === null ? `remove the approval of ${changeId}` : `write the approval of ${changeId}`
    if (note === null) {
      yield* git.must(action, ["push", "--no-verify", "-q", options.remote, `:${ref}`])
      return
    }
    const tree = yield* git.must(action, ["mktree"], "")
    const commit = yield* git.must(
      action,
      ["-c", "user.name=spool", "-c", "user.email=spool@localhost", "commit-tree", tree, "-m", JSON.stringify(note)]
    )
    yield* git.must(action, ["push", "--no-verify", "-q", options.remote, `+${commit}:${ref}`])
  })
