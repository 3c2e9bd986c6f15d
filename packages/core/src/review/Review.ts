/**
 * The review of a claim (`--review`): once a claim passed the checks, each reviewer runs once, in a
 * fresh process, in a throwaway work tree of the work under review, with a prompt of its own, and
 * gives its verdict. Every reviewer must approve; the first that does not ends the review.
 */
import { Clock, Effect } from "effect"
import type { LoopAgent } from "../agents/LoopAgents.js"
import type { ChangeId, HarnessUsage, ReviewRecord } from "../domain/Domain.js"
import { addUsage } from "../domain/Usage.js"
import type { GitSnapshot } from "../git/GitSummary.js"
import type { LimitPlan, UsageLimit } from "../guards/LimitWait.js"
import { runHarness } from "../harness/AgentRun.js"
import { type CaptureOf, makeCaptureOf } from "../harness/Capture.js"
import { LoopReporter } from "../output/LoopReporter.js"
import type { Redactor } from "../output/Redact.js"
import { HistoryStore } from "../state/HistoryStore.js"
import { formatDuration } from "../text/Figures.js"
import { oneLine } from "../text/Text.js"
import { ReviewGit } from "./ReviewGit.js"
import { type ReviewMaterial, reviewPrompt } from "./ReviewPrompt.js"
import { findingsOf, makeVerdictJudge, type ReviewJudgement } from "./VerdictRule.js"

/** How the loop watches a review: the spend its reviewers report, the guards that may stop them, the limit waits. */
export interface ReviewWatch {
  /** Told the iteration's usage so far (the agent's and the reviewers'). */
  readonly onUsage: (usage: HarnessUsage) => Effect.Effect<void>
  /** Completes when a guard must stop the reviewer (a spend cap, the deadline). */
  readonly stopWhen: Effect.Effect<string>
  /** Waits out a usage limit a reviewer met, as the loop waits for its agents', or gives up. */
  readonly waitForLimit: (limit: UsageLimit, agent: string) => Effect.Effect<LimitPlan>
}

export interface ReviewRequest {
  readonly changeId: ChangeId
  readonly runId: string
  readonly iteration: number
  readonly reviewers: ReadonlyArray<LoopAgent>
  readonly material: ReviewMaterial
  /** The work under review. */
  readonly at: GitSnapshot
  /** What the iteration's agent spent: the reviewers' spend is told on top of it. */
  readonly agentUsage: HarnessUsage | null
  readonly stream: boolean
  readonly inactivityTimeoutMs: number
  readonly redact: Redactor
}

/** What came of the review. */
export interface ReviewOutcome {
  /** Every review run, in order (a reviewer that met a usage limit and ran again is there twice). */
  readonly reviews: ReadonlyArray<ReviewRecord>
  readonly approved: boolean
  /** The guard that stopped a reviewer, when one did. */
  readonly stopped: string | null
  /** A reviewer's usage limit that is not waited out: the loop stops as it does for an agent's. */
  readonly gaveUp: { readonly limit: string; readonly plan: Extract<LimitPlan, { _tag: "GiveUp" }> } | null
}

const failureOf = (capture: CaptureOf<ReviewJudgement>, inactivityTimeoutMs: number) =>
  capture.exitCode === null && capture.signal === null && capture.error !== null
    ? `it could not run: ${capture.error}`
    : capture.timedOut
    ? `it was silent for ${formatDuration(inactivityTimeoutMs)} (--inactivity-timeout)`
    : capture.signal !== null
    ? `it was killed by ${capture.signal}`
    : capture.exitCode !== 0
    ? `it exited with code ${capture.exitCode}`
    : capture.error !== null
    ? `it reported: ${capture.error}`
    : null

/** The record of one review, from how its run ended and what the reviewer said. */
const recordOf = (reviewer: LoopAgent, capture: CaptureOf<ReviewJudgement>, inactivityTimeoutMs: number, durationMs: number, redact: Redactor): ReviewRecord => {
  const base = { reviewer: reviewer.id, durationMs, usage: capture.usage }
  if (capture.limited !== null) return { ...base, verdict: "limited", findings: redact(capture.limited.message) }
  if (capture.stopped !== null) return { ...base, verdict: "failed", findings: `stopped: ${capture.stopped}` }
  const failure = failureOf(capture, inactivityTimeoutMs)
  if (failure !== null) return { ...base, verdict: "failed", findings: redact(failure) }
  const judgement = capture.judge.judgement()
  return judgement._tag === "Approve"
    ? { ...base, verdict: "approve", findings: null }
    : judgement._tag === "Changes"
    ? { ...base, verdict: "changes", findings: redact(findingsOf(capture.said.text())) }
    : { ...base, verdict: "none", findings: judgement.reason }
}

/** The line a review ends with. */
export const reviewLine = (review: ReviewRecord) =>
  `review by ${review.reviewer}: ${
    review.verdict === "approve"
      ? "approved"
      : review.verdict === "changes"
      ? `changes asked: ${oneLine(review.findings ?? "", 160)}`
      : review.verdict === "none"
      ? `not approved: ${review.findings}`
      : review.verdict === "limited"
      ? `not given: its usage limit (${oneLine(review.findings ?? "", 120)})`
      : `failed: ${review.findings}`
  }`

/** One reviewer, once: its work tree made and thrown away, its output in the iteration's log. */
const reviewOnce = (request: ReviewRequest, reviewer: LoopAgent, watch: ReviewWatch, spentBefore: HarnessUsage | null) =>
  Effect.scoped(Effect.gen(function*() {
    const git = yield* ReviewGit
    const history = yield* HistoryStore
    const reporter = yield* LoopReporter
    const startedAt = yield* Clock.currentTimeMillis
    yield* reporter.line(`reviewing the claim: ${reviewer.id}`)
    const prompt = reviewPrompt(request.material)
    const capture = makeCaptureOf(makeVerdictJudge(prompt), true)
    const tree = yield* Effect.either(git.checkout(request.at))
    if (tree._tag === "Left") {
      capture.error = `no work tree could be made for it: ${tree.left.message}`
    } else {
      const log = yield* history.openLog(request.changeId, request.runId, request.iteration)
      yield* log.write(request.redact(`\n=== review by ${reviewer.id} ===\n${prompt}\n=== output ===\n`))
      const ran = yield* Effect.either(runHarness({
        harness: reviewer.service,
        request: { prompt, changeId: request.changeId, iteration: request.iteration, cwd: tree.right },
        capture,
        log,
        reporter,
        stream: request.stream,
        inactivityTimeoutMs: request.inactivityTimeoutMs,
        redact: request.redact,
        onUsage: (usage) => watch.onUsage(addUsage(spentBefore, usage)),
        stopWhen: watch.stopWhen
      }))
      if (ran._tag === "Left") {
        if (ran.left._tag === "StateError") return yield* ran.left
        capture.error = ran.left.message
      }
    }
    if (!capture.displayAtLineStart) yield* reporter.write("\n")
    const endedAt = yield* Clock.currentTimeMillis
    const review = recordOf(reviewer, capture, request.inactivityTimeoutMs, endedAt - startedAt, request.redact)
    yield* reporter.line(reviewLine(review))
    return { review, limit: capture.limited, stopped: capture.stopped }
  }))

/** Runs the reviewers in order until one does not approve; a reviewer's usage limit is waited out and it runs again. */
export const runReviews = (request: ReviewRequest, watch: ReviewWatch) =>
  Effect.gen(function*() {
    const reviews: Array<ReviewRecord> = []
    let spent = request.agentUsage
    for (const reviewer of request.reviewers) {
      for (;;) {
        const { limit, review, stopped } = yield* reviewOnce(request, reviewer, watch, spent)
        reviews.push(review)
        if (review.usage !== null) spent = addUsage(spent, review.usage)
        if (limit !== null) {
          const plan = yield* watch.waitForLimit(limit, reviewer.id)
          if (plan._tag === "GiveUp") {
            return { reviews, approved: false, stopped: null, gaveUp: { limit: review.findings ?? "usage limit", plan } } satisfies ReviewOutcome
          }
          continue
        }
        if (review.verdict !== "approve") return { reviews, approved: false, stopped, gaveUp: null } satisfies ReviewOutcome
        break
      }
    }
    return { reviews, approved: true, stopped: null, gaveUp: null } satisfies ReviewOutcome
  })
