/** A change's page, of a run whose claims were reviewed (`--review`): the reviews and the reviewers' spend, apart from the agents'; each review's line in its iteration's row. */
import type { DashboardDetail, DashboardReview } from "@spool/core"
import { formatReviewSpend } from "@spool/core/figures"
import { append, el, setText } from "./dom.js"
import { duration } from "./format.js"

const verdictWords: Record<DashboardReview["verdict"], string> = {
  approve: "approved",
  changes: "asked for changes",
  none: "gave no verdict",
  failed: "failed",
  limited: "met its usage limit"
}

/** `✓ claude approved · 40.0s`, `✗ codex:gpt-5.5 asked for changes · 1m02s`: who reviewed the claim, and what it made of it. */
export const reviewLine = (review: DashboardReview): string =>
  (review.verdict === "approve" ? "✓ " : "✗ ") + review.reviewer + " " + verdictWords[review.verdict] + " · " + duration(review.durationMs)

/** The run's reviews, those approved, and the reviewers' cost and tokens: `3 (2 approved), $0.31, 12.0k tokens`. */
export const reviewsView = () => {
  const total = el("div", "review-total")
  const note = el("span", "card-note", "the reviewers' part of the spend")
  const card = append(el("div", "card reviews"), append(el("div", "card-head"), el("h2", null, "Reviews"), note), append(el("div", "card-body"), total))
  const update = (detail: Pick<DashboardDetail, "reviews">) => setText(total, detail.reviews === null ? "" : formatReviewSpend(detail.reviews))
  return { card, update }
}
