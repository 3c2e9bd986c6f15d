import { Effect, Exit, Option, Ref } from "effect"
import type { HarnessUsage } from "../domain/Domain.js"
import type { GitSnapshot } from "../git/GitSummary.js"
import type { Capture } from "../harness/Capture.js"
import { taskSection, type TaskList } from "../prompt/Tasks.js"
import { cutDiff } from "../review/ReviewDiff.js"
import { loopReviewers } from "../review/Reviewers.js"
import { ReviewGit } from "../review/ReviewGit.js"
import { type ReviewOutcome, runReviews, type ReviewWatch } from "../review/Review.js"
import { checkResult, type Verification } from "../verify/Verification.js"
import type { LoopInputs } from "./LoopInputs.js"
import type { LoopRequest } from "./LoopRequest.js"

/** What a review reads of the run: its request, its name, its documents, and the work tree it started from. */
export interface ReviewContext {
  readonly input: LoopRequest
  readonly runId: string
  readonly inputs: LoopInputs
  readonly runStart: Ref.Ref<GitSnapshot | null>
}

/** What a claim's review needs of its iteration. */
export interface ClaimUnderReview {
  readonly iteration: number
  readonly capture: Capture
  readonly tasksAfter: TaskList
  readonly verification: Verification | null
  /** The work tree the agent left: the work under review. */
  readonly after: GitSnapshot | null
  readonly agentUsage: HarnessUsage | null
}

/**
 * Has the reviewers review a claim that passed the checks (none: null); Ctrl-C may stop them (and
 * only them, in here), as it may the checks.
 */
export const reviewClaim = (
  ctx: ReviewContext,
  claim: ClaimUnderReview,
  watch: ReviewWatch,
  restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const { reviewers } = yield* loopReviewers
    if (reviewers.length === 0) return { outcome: null, interrupted: false }
    const git = yield* Effect.serviceOption(ReviewGit)
    const { change, options } = ctx.input
    const start = yield* Ref.get(ctx.runStart)
    const at = claim.after
    // Without git (refused before the run starts) or a snapshot of the work, there is nothing to review: a rejection, saying so.
    if (start === null || at === null || Option.isNone(git)) {
      const review = { reviewer: reviewers[0]!.id, verdict: "failed", findings: "the work under review could not be read from git", durationMs: 0, usage: null } as const
      return { outcome: { reviews: [review], approved: false, stopped: null, gaveUp: null } satisfies ReviewOutcome, interrupted: false }
    }
    const files = yield* ctx.inputs.gitOrWarn(git.value.diff(start, at), [])
    const proposal = yield* ctx.inputs.readDocument(change.proposalPath)
    const module = change.modulePath === null ? null : yield* ctx.inputs.readDocument(change.modulePath)
    const reviewed = yield* Effect.exit(restore(runReviews({
      changeId: change.id,
      runId: ctx.runId,
      iteration: claim.iteration,
      reviewers,
      material: {
        changeId: change.id,
        moduleId: change.moduleId,
        proposal,
        module,
        tasks: taskSection(claim.tasksAfter),
        diff: cutDiff(files),
        checks: (claim.verification?.results ?? []).map(checkResult),
        closingMessage: claim.capture.said.text()
      },
      at,
      agentUsage: claim.agentUsage,
      stream: options.stream,
      inactivityTimeoutMs: options.inactivityTimeoutMs,
      redact: ctx.input.redact
    }, watch).pipe(Effect.provideService(ReviewGit, git.value))))
    if (Exit.isFailure(reviewed) && !Exit.isInterrupted(reviewed)) return yield* Effect.failCause(reviewed.cause)
    return Exit.isSuccess(reviewed) ? { outcome: reviewed.value, interrupted: false } : { outcome: null, interrupted: true }
  })
