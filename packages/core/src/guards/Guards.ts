import { Schema } from "effect"
import { countTokens, type GuardReport, type HarnessUsage, type IterationOutcome, type LoopOptions } from "../domain/Domain.js"
import { errorFingerprint } from "./ErrorFingerprint.js"
import { addCost } from "../domain/Usage.js"
import { formatCost, formatDuration, formatMoney, formatTokens, type SpendFigures } from "../text/Figures.js"

/**
 * The guards of an unattended run, in one place: spend caps (cost, tokens, duration), the stall
 * breaker and the failure breaker. The loop tells them what each iteration did and what the
 * agent spends as it reports it; they say whether to go on.
 */
export type GuardSettings = Pick<
  LoopOptions,
  "maxCostUsd" | "maxTokens" | "maxDurationMs" | "stallIterations" | "maxConsecutiveFailures" | "failFast" | "maxLimitWaitMs"
>

/** What the harness can report: a cap on something it does not report could never trip. */
export interface HarnessReports {
  readonly cost: boolean
  readonly tokens: boolean
}

/** A cap set on something the harness does not report. */
export class UnsupportedGuardError extends Schema.TaggedError<UnsupportedGuardError>()("UnsupportedGuardError", {
  flag: Schema.String,
  harness: Schema.String,
  what: Schema.String
}) {
  override get message() {
    return `${this.flag} needs a harness that reports ${this.what}, and the ${this.harness} harness does not; ` +
      (this.flag === "--max-cost"
        ? "drop --max-cost, or cap --max-tokens or --max-duration instead"
        : `drop ${this.flag}, or cap --max-duration instead`)
  }
}

/** The first cap the harness cannot report, if any: checked before anything runs. */
export const unsupportedCap = (settings: GuardSettings, harness: string, reports: HarnessReports) =>
  settings.maxCostUsd !== null && !reports.cost
    ? new UnsupportedGuardError({ flag: "--max-cost", harness, what: "cost" })
    : settings.maxTokens !== null && !reports.tokens
    ? new UnsupportedGuardError({ flag: "--max-tokens", harness, what: "tokens" })
    : null

export interface Spend {
  /** US dollars; null while the harness has reported no cost. */
  readonly costUsd: number | null
  readonly tokens: number
}

export const noSpend: Spend = { costUsd: null, tokens: 0 }

/**
 * What a run's guards counted it spent, each figure null while the agent reported none: the
 * guards count 0 tokens until it does, and a cost without tokens is 0 tokens.
 */
export const reportedSpend = (guards: GuardReport | null): SpendFigures =>
  guards === null
    ? { costUsd: null, tokens: null }
    : { costUsd: guards.costUsd, tokens: guards.costUsd === null && guards.tokens === 0 ? null : guards.tokens }

export const addSpend = (spend: Spend, usage: HarnessUsage | null): Spend =>
  usage === null ? spend : { costUsd: addCost(spend.costUsd, usage.cost), tokens: spend.tokens + countTokens(usage) }

export interface GuardCounters {
  readonly spend: Spend
  readonly stalledIterations: number
  readonly consecutiveFailures: number
  /** The fingerprint of each failure of the current streak, newest last (null: it said nothing). */
  readonly failureFingerprints: ReadonlyArray<string | null>
}

export const initialCounters: GuardCounters = { spend: noSpend, stalledIterations: 0, consecutiveFailures: 0, failureFingerprints: [] }

export type SpendGuard = "max-cost" | "max-tokens" | "max-duration"

/** A guard that stops the loop (exit 4), with the line that says so. */
export interface GuardStop {
  readonly reason: SpendGuard | "stall"
  readonly message: string
}

/** The run's totals, for the line a guard stops with. */
export const describeSpend = (spend: Spend, elapsedMs: number) =>
  `${formatCost(spend.costUsd)}${spend.costUsd === null ? "" : " spent"}, ${formatTokens(spend.tokens)}, ${formatDuration(elapsedMs)}`

/** The spend cap `spend` (reported so far) or `elapsedMs` has reached, if any. */
export const spendStop = (settings: GuardSettings, spend: Spend, elapsedMs: number): (GuardStop & { readonly reason: SpendGuard }) | null => {
  const totals = describeSpend(spend, elapsedMs)
  if (settings.maxCostUsd !== null && spend.costUsd !== null && spend.costUsd >= settings.maxCostUsd) {
    return { reason: "max-cost", message: `stopped: --max-cost ${formatMoney(settings.maxCostUsd)} reached (${totals})` }
  }
  if (settings.maxTokens !== null && spend.tokens >= settings.maxTokens) {
    return { reason: "max-tokens", message: `stopped: --max-tokens ${settings.maxTokens} reached (${totals})` }
  }
  if (settings.maxDurationMs !== null && elapsedMs >= settings.maxDurationMs) {
    return { reason: "max-duration", message: `stopped: --max-duration ${formatDuration(settings.maxDurationMs)} reached (${totals})` }
  }
  return null
}

/** What one finished iteration tells the guards. */
export interface IterationFacts {
  readonly outcome: IterationOutcome
  /** It changed files, committed, ticked a task or claimed completion; null when that cannot be known (no git, nothing else). */
  readonly progress: boolean | null
  /** What a failed run said went wrong (the agent's error, or its last line on stderr), for recognising the same error again. */
  readonly failure: string | null
}

/** The failure breaker tripped: exit 1. */
export interface FailureStop {
  readonly failures: number
  /** The error every failure of the streak shared, when they did. */
  readonly sameError: string | null
}

/**
 * What the guards say after an iteration:
 * - `Continue`, with a warning and a note for the agent's next prompt when the loop is about to stall
 * - `Stop`: a guard stopped the loop (exit 4)
 * - `Fail`: the failure breaker tripped (exit 1)
 */
export type GuardVerdict =
  | { readonly _tag: "Continue"; readonly warning: string | null; readonly note: string | null }
  | { readonly _tag: "Stop"; readonly stop: GuardStop }
  | { readonly _tag: "Fail"; readonly failure: FailureStop }

export const failureLimit = (settings: GuardSettings) => (settings.failFast ? 1 : settings.maxConsecutiveFailures)

const isFailure = (outcome: IterationOutcome) => outcome === "failed" || outcome === "timeout"

/** Counts the iteration: a failure toward the failure breaker, one without progress toward the stall breaker; a limited one toward neither. */
export const countIteration = (counters: GuardCounters, facts: IterationFacts): GuardCounters => {
  if (facts.outcome === "limited" || facts.outcome === "interrupted") return counters
  const stalledIterations = facts.progress === true
    ? 0
    : facts.progress === false && !isFailure(facts.outcome)
    ? counters.stalledIterations + 1
    : counters.stalledIterations
  return isFailure(facts.outcome)
    ? {
      ...counters,
      stalledIterations,
      consecutiveFailures: counters.consecutiveFailures + 1,
      failureFingerprints: [...counters.failureFingerprints, facts.failure === null ? null : errorFingerprint(facts.failure)]
    }
    : { ...counters, stalledIterations, consecutiveFailures: 0, failureFingerprints: [] }
}

/** The verdict on counters that have just counted an iteration that ended with `failure` (if it failed). */
export const judgeCounters = (settings: GuardSettings, counters: GuardCounters, failure: string | null, elapsedMs: number): GuardVerdict => {
  const limit = failureLimit(settings)
  // 0 turns the failure breaker off, as it does the stall breaker.
  if (limit > 0 && counters.consecutiveFailures >= limit) {
    const prints = counters.failureFingerprints.slice(-limit)
    const same = limit > 1 && prints.length === limit && prints.every((print) => print !== null && print === prints[0])
    return { _tag: "Fail", failure: { failures: counters.consecutiveFailures, sameError: same ? failure : null } }
  }
  const stall = settings.stallIterations
  if (stall > 0 && counters.stalledIterations >= stall) {
    return {
      _tag: "Stop",
      stop: {
        reason: "stall",
        message: `stopped: ${stall} iteration${stall === 1 ? "" : "s"} in a row made no progress (--stall-iterations ${stall}; ${
          describeSpend(counters.spend, elapsedMs)
        })`
      }
    }
  }
  if (stall > 1 && counters.stalledIterations === stall - 1) {
    const n = counters.stalledIterations
    return {
      _tag: "Continue",
      warning: `${n} iteration${n === 1 ? "" : "s"} in a row made no progress (no file changed, no commit, no task ticked, ` +
        `no completion claimed); the loop stops after ${stall} (--stall-iterations)`,
      note: `The last ${n === 1 ? "iteration" : `${n} iterations`} changed nothing: no file, no commit, no task ticked in tasks.md. ` +
        "Do not repeat what did not work: find out what blocks you and try another way, or, if the work is truly done, " +
        "verify it and claim completion. One more iteration without progress stops the loop."
    }
  }
  return { _tag: "Continue", warning: null, note: null }
}

/** The guards as `--status` shows them. */
export const guardReport = (settings: GuardSettings, counters: GuardCounters): GuardReport => ({
  maxCostUsd: settings.maxCostUsd,
  maxTokens: settings.maxTokens,
  maxDurationMs: settings.maxDurationMs,
  stallIterations: settings.stallIterations,
  maxConsecutiveFailures: failureLimit(settings),
  maxLimitWaitMs: settings.maxLimitWaitMs,
  costUsd: counters.spend.costUsd,
  tokens: counters.spend.tokens,
  stalledIterations: counters.stalledIterations,
  consecutiveFailures: counters.consecutiveFailures
})
