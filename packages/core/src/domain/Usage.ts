import type { HarnessUsage } from "./Domain.js"

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
