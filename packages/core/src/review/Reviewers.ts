import { Context, Effect, Option } from "effect"
import type { LoopAgent } from "../agents/LoopAgents.js"

/** Rejections in a run before the loop stops as `review-rejected`, unless said. */
export const MAX_REVIEWS = 3

/**
 * The reviewers of a loop's claims (`--review`): each must approve, in order, before a claim that
 * passed the checks completes the change; after `maxReviews` rejections in a run the loop stops.
 */
// Stryker disable next-line StringLiteral: the key only tells services apart in a context, and no other service has an empty one
export class LoopReviewers extends Context.Tag("@spool/core/LoopReviewers")<LoopReviewers, {
  readonly reviewers: ReadonlyArray<LoopAgent>
  readonly maxReviews: number
}>() {}

/** The loop's reviewers: those given, else none. */
export const loopReviewers = Effect.map(
  Effect.serviceOption(LoopReviewers),
  Option.getOrElse((): LoopReviewers["Type"] => ({ reviewers: [], maxReviews: MAX_REVIEWS }))
)
