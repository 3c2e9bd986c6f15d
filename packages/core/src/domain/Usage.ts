import { Schema } from "effect"
import type { AgentSpend, ReviewSpend } from "../text/Figures.js"
import { type AgentNote, countTokens, type HarnessUsage, type IterationRecord } from "./Domain.js"

/** Unknown only while every part is unknown. */
export const addCost = (a: number | null, b: number | null): number | null => a === null ? b : b === null ? a : a + b

/** `next` added to `total` (null: nothing reported yet). */
export const addUsage = (total: HarnessUsage | null, next: HarnessUsage): HarnessUsage =>
  total === null ? next : {
    inputTokens: total.inputTokens + next.inputTokens,
    outputTokens: total.outputTokens + next.outputTokens,
    reasoningTokens: total.reasoningTokens + next.reasoningTokens,
    cacheReadTokens: total.cacheReadTokens + next.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + next.cacheWriteTokens,
    cost: addCost(total.cost, next.cost)
  }

export const UsageTotals = Schema.Struct({
  tokens: Schema.Number,
  /** Null when no iteration reported a cost. */
  cost: Schema.NullOr(Schema.Number)
})
export type UsageTotals = typeof UsageTotals.Type

/** The sum of `used`; null when it is empty. */
const totalOf = (used: ReadonlyArray<HarnessUsage>): UsageTotals | null => {
  if (used.length === 0) return null
  return {
    tokens: used.reduce((n, usage) => n + countTokens(usage), 0),
    cost: used.reduce<number | null>((n, usage) => addCost(n, usage.cost), null)
  }
}

/** What the iterations that reported usage used in all; null when none did. */
export const usageTotals = (records: ReadonlyArray<IterationRecord>): UsageTotals | null =>
  totalOf(records.flatMap((record) => (record.usage === null ? [] : [record.usage])))

/** What the reviews of the iterations' claims (`--review`) used in all, apart from the agents; null when none reported usage. */
export const reviewTotals = (records: ReadonlyArray<IterationRecord>): UsageTotals | null =>
  totalOf(records.flatMap((record) => (record.reviews ?? []).flatMap((review) => (review.usage === null ? [] : [review.usage]))))

/** How many reviews the iterations' claims had, and how many approved. */
export const reviewCounts = (records: ReadonlyArray<IterationRecord>) => {
  const reviews = records.flatMap((record) => record.reviews ?? [])
  return { reviews: reviews.length, approved: reviews.filter((review) => review.verdict === "approve").length }
}

/** The iterations' reviews as the views give them: how many, how many approved, what the reviewers spent; null when none ran. */
export const reviewSpend = (records: ReadonlyArray<IterationRecord>): ReviewSpend | null => {
  const counts = reviewCounts(records)
  if (counts.reviews === 0) return null
  const totals = reviewTotals(records)
  return { ...counts, costUsd: totals?.cost ?? null, tokens: totals?.tokens ?? null }
}

/** The reviews of several runs (a sweep's loops) in all; null when none of them had any. */
export const sumReviewSpend = (runs: ReadonlyArray<ReviewSpend | null | undefined>): ReviewSpend | null =>
  runs.reduce<ReviewSpend | null>((sum, run) =>
    run === null || run === undefined ? sum : sum === null ? run : {
      reviews: sum.reviews + run.reviews,
      approved: sum.approved + run.approved,
      costUsd: addCost(sum.costUsd, run.costUsd),
      tokens: run.tokens === null ? sum.tokens : (sum.tokens ?? 0) + run.tokens
    }, null)

/** An agent's note as the views give its spend: its tokens unknown (null) while it reported neither tokens nor a cost, as a run's are. */
export const agentSpend = (note: AgentNote): AgentSpend => ({
  agent: note.agent,
  iterations: note.iterations,
  costUsd: note.costUsd,
  tokens: note.costUsd === null && note.tokens === 0 ? null : note.tokens
})

/** The agents of several runs (a sweep's loops), each summed over the runs it is in, in the order they are first met. */
export const sumAgentSpend = (runs: ReadonlyArray<ReadonlyArray<AgentNote>>): ReadonlyArray<AgentSpend> => {
  const sums = new Map<string, AgentSpend>()
  for (const note of runs.flat()) {
    const spend = agentSpend(note)
    const sum = sums.get(note.agent)
    sums.set(note.agent, sum === undefined ? spend : {
      agent: note.agent,
      iterations: sum.iterations + spend.iterations,
      costUsd: addCost(sum.costUsd, spend.costUsd),
      tokens: spend.tokens === null ? sum.tokens : (sum.tokens ?? 0) + spend.tokens
    })
  }
  return [...sums.values()]
}
