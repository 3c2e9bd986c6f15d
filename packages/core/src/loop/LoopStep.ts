import { Clock, Effect, Ref } from "effect"
import { countIteration, judgeCounters, spendStop } from "../guards/Guards.js"
import { clock } from "../guards/LimitWait.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { oneLine } from "../text/Text.js"
import { rejectingCheck } from "../verify/Verification.js"
import { beforeIteration, deadlineCame } from "./Deadline.js"
import { attemptIteration } from "./LoopAttempt.js"
import { LoopFailedError, type LoopResult } from "./LoopResult.js"
import type { Finding } from "./Claim.js"
import { loopReviewers } from "../review/Reviewers.js"
import { reviewLine } from "../review/Review.js"
import type { LoopRun } from "./LoopRun.js"

/** Where the loop is between iterations: the next one to run, or the run's end. */
export type Next = {
  readonly _tag: "Next"
  readonly iteration: number
  readonly notes: ReadonlyArray<string>
  /** What the reviewers asked to change of the last claim (`--review`). */
  readonly findings: ReadonlyArray<Finding>
}
export type End = { readonly _tag: "End"; readonly result: LoopResult }

const end = (run: LoopRun, result: Omit<LoopResult, "run">): End => ({ _tag: "End", result: { run: run.runId, ...result } })

/** The first iteration of this sitting, or the end when an earlier sitting ran every iteration --max-iterations allows. */
export const firstStep = (run: LoopRun): Next | End => {
  const { options } = run.input
  const { firstIteration } = run
  return firstIteration > options.maxIterations
    ? end(run, {
      status: "max-iterations",
      reason: "max-iterations",
      iterations: firstIteration - 1,
      message: `stopped: --max-iterations (${options.maxIterations}) reached before this sitting; raise it to go on`,
      resumeAt: null
    })
    : { _tag: "Next", iteration: firstIteration, notes: [], findings: [] }
}

/** One iteration and what the guards make of it: the next iteration, or the end of the run. */
export const step = (run: LoopRun, { findings, iteration, notes }: Next) =>
  Effect.gen(function*() {
    const reporter = yield* LoopReporter
    const { options } = run.input
    const { deadlineAt } = run
    if (deadlineAt !== null) {
      const decision = beforeIteration(deadlineAt, yield* Clock.currentTimeMillis, yield* Ref.get(run.durations))
      if (decision._tag === "Stop") {
        return end(run, { status: "deadline", reason: "deadline", iterations: iteration - 1, message: decision.message, resumeAt: null })
      }
    }
    const attempt = yield* attemptIteration(run, iteration, notes, findings)
    if (attempt._tag === "Capped") {
      return end(run, { status: "stopped", reason: attempt.stop.reason, iterations: iteration - 1, message: attempt.stop.message, resumeAt: null })
    }
    if (attempt._tag === "GaveUp") {
      const { plan } = attempt
      const when = plan.resumeAt === null ? "run spool again once it is lifted" : `run spool again after ${clock(plan.resumeAt)}`
      const message = `stopped: ${plan.why} (${oneLine(attempt.limit ?? "usage limit")}); ${when}`
      return end(run, { status: "usage-limit", reason: "usage-limit", iterations: attempt.iterations, message, resumeAt: plan.resumeAt })
    }
    const { result } = attempt
    if (result.record.outcome === "complete") {
      const reviewed = (result.record.reviews ?? []).length > 0 ? " and approved by its review" : ""
      return end(run, { status: "complete", reason: "complete", iterations: iteration, message: `complete: the promise was accepted at iteration ${iteration}${reviewed}`, resumeAt: null })
    }
    if (result.rejected) {
      const { maxReviews } = yield* loopReviewers
      const rejections = yield* Ref.updateAndGet(run.reviewRejections, (n) => n + 1)
      if (rejections >= maxReviews) {
        const last = (result.record.reviews ?? []).at(-1)
        const message = `stopped: the review turned the claim down ${rejections} times (--max-reviews ${maxReviews})` +
          `${last === undefined ? "" : `; the last: ${oneLine(reviewLine(last), 200)}`}; a person should look (spool ralph --status)`
        return end(run, { status: "review-rejected", reason: "review-rejected", iterations: iteration, message, resumeAt: null })
      }
    }
    yield* Ref.update(run.durations, (list) => [...list, result.record.durationMs])
    if (result.stoppedBy === "deadline" && deadlineAt !== null) {
      return end(run, { status: "deadline", reason: "deadline", iterations: iteration, message: deadlineCame(deadlineAt), resumeAt: null })
    }
    const ms = yield* run.elapsed
    const counted = yield* Ref.updateAndGet(run.counters, (c) => countIteration(c, result.facts))
    const cap = spendStop(options, counted.spend, ms)
    if (cap !== null) {
      // A guard that stopped the agent mid-run finds its cap reached here too: spend and time only grow.
      return end(run, { status: "stopped", reason: cap.reason, iterations: iteration, message: cap.message, resumeAt: null })
    }
    const verdict = judgeCounters(options, counted, result.facts.failure, ms)
    if (verdict._tag === "Fail") {
      const { record } = result
      return yield* new LoopFailedError({
        iteration,
        exitCode: record.exitCode,
        signal: record.signal,
        error: record.error,
        outcome: record.outcome,
        failures: verdict.failure.failures,
        failFast: options.failFast,
        sameError: verdict.failure.sameError,
        check: rejectingCheck(record.verify ?? [])
      })
    }
    if (verdict._tag === "Stop") {
      return end(run, { status: "stopped", reason: verdict.stop.reason, iterations: iteration, message: verdict.stop.message, resumeAt: null })
    }
    if (verdict.warning !== null) yield* reporter.warn(verdict.warning)
    if (iteration >= options.maxIterations) {
      const missing = options.verify.length > 0 ? "a claim of completion that passed --verify" : "the completion promise"
      const message = `stopped: --max-iterations (${options.maxIterations}) reached without ${missing}`
      return end(run, { status: "max-iterations", reason: "max-iterations", iterations: iteration, message, resumeAt: null })
    }
    const next: Next = {
      _tag: "Next",
      iteration: iteration + 1,
      notes: verdict.note === null ? result.notes : [...result.notes, verdict.note],
      findings: result.findings
    }
    yield* run.checkpoint
    return next
  })
