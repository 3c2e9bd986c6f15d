import { Schema } from "effect"
import { countTokens, type HarnessUsage, type IterationRecord } from "./Domain.js"

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

/** What the iterations that reported usage used in all; null when none did. */
export const usageTotals = (records: ReadonlyArray<IterationRecord>): UsageTotals | null => {
  const used = records.flatMap((record) => (record.usage === null ? [] : [record.usage]))
  if (used.length === 0) return null
  return {
    tokens: used.reduce((n, usage) => n + countTokens(usage), 0),
    cost: used.reduce<number | null>((n, usage) => addCost(n, usage.cost), null)
  }
}
