import { Context, Effect, Option } from "effect"
import type { LoopAgent } from "../agents/LoopAgents.js"

/** How long one reviewer may take, unless said: past it, it is stopped and its review is a rejection. */
export const REVIEW_TIMEOUT_MS = 30 * 60 * 1000
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
  readonly timeoutMs: number
}>() {}

/** The loop's reviewers: those given, else none. */
export const loopReviewers = Effect.map(
  Effect.serviceOption(LoopReviewers),
  Option.getOrElse((): LoopReviewers["Type"] => ({ reviewers: [], maxReviews: MAX_REVIEWS, timeoutMs: REVIEW_TIMEOUT_MS }))
)
