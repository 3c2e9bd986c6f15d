import { describe, expect, it } from "@effect/vitest"
import {
  doneTasks,
  formatAgentSpend,
  formatAgentsSpend,
  formatCost,
  formatDuration,
  formatMoney,
  formatReviewSpend,
  formatSpend,
  formatTaskCount,
  formatTaskProgress,
  formatTokens,
  formatTokensShort,
  tasksDone
} from "../src/text/Figures.js"

describe("formatDuration", () => {
  it.each([
    [0, "0ms"],
    [450, "450ms"],
    [1000, "1.0s"],
    [12_345, "12.3s"],
    [59_900, "59.9s"],
    [60_000, "1m00s"],
    [192_000, "3m12s"],
    [3_599_000, "59m59s"],
    [3_600_000, "1h00m"],
    [3_720_000, "1h02m"],
    [36_000_000 + 5 * 60_000, "10h05m"],
    [100 * 3_600_000, "100h00m"]
  ])("%d ms is %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text)
  })

  it("rounds to the second past a minute, and gives no seconds past an hour", () => {
    expect(formatDuration(60_499)).toBe("1m00s")
    expect(formatDuration(60_500)).toBe("1m01s")
    expect(formatDuration(3_659_000)).toBe("1h00m")
  })

  it("chooses the unit by the rounded figure: never 1000ms, 60.0s or 60m00s", () => {
    expect(formatDuration(999.4)).toBe("999ms")
    expect(formatDuration(999.5)).toBe("1.0s")
    expect(formatDuration(12_350)).toBe("12.4s")
    expect(formatDuration(59_949)).toBe("59.9s")
    expect(formatDuration(59_950)).toBe("1m00s")
    expect(formatDuration(3_599_499)).toBe("59m59s")
    expect(formatDuration(3_599_500)).toBe("1h00m")
  })

  it("reads a duration that is negative or not a number as none", () => {
    expect(formatDuration(-5)).toBe("0ms")
    expect(formatDuration(Number.NaN)).toBe("0ms")
  })
})

describe("formatMoney", () => {
  it.each([
    [0, "$0.0000"],
    [0.00004, "$0.0000"],
    [0.00005, "$0.0001"],
    [0.0004, "$0.0004"],
    [0.042, "$0.0420"],
    [0.0999, "$0.0999"],
    [0.1, "$0.10"],
    [0.42, "$0.42"],
    [1, "$1.00"],
    [5.12, "$5.12"],
    [18.2, "$18.20"],
    [1234.5, "$1234.50"]
  ])("$%d is %s", (usd, text) => {
    expect(formatMoney(usd)).toBe(text)
  })

  it("rounds half up as the figure is written, whatever float noise holds it", () => {
    expect(formatMoney(0.125)).toBe("$0.13")
    expect(formatMoney(1.005)).toBe("$1.01")
    expect(formatMoney(0.145)).toBe("$0.15")
    expect(formatMoney(0.1 + 0.2)).toBe("$0.30")
    expect(formatMoney(0.00015)).toBe("$0.0002")
  })

  it("writes cents once a figure rounds to ten cents: $0.10, never $0.1000", () => {
    expect(formatMoney(0.09994)).toBe("$0.0999")
    expect(formatMoney(0.09995)).toBe("$0.10")
    expect(formatMoney(0.099999)).toBe("$0.10")
  })

  it("says a cost not reported is unknown", () => {
    expect(formatCost(null)).toBe("cost unknown")
    expect(formatCost(0)).toBe("$0.0000")
    expect(formatCost(0.42)).toBe("$0.42")
  })
})

describe("formatTokens", () => {
  it("writes the exact count", () => {
    expect(formatTokens(0)).toBe("0 tokens")
    expect(formatTokens(15_200)).toBe("15200 tokens")
  })

  it("writes thousands to a tenth in the short form, rounded half up", () => {
    expect(formatTokensShort(0)).toBe("0 tokens")
    expect(formatTokensShort(999)).toBe("999 tokens")
    expect(formatTokensShort(1000)).toBe("1.0k tokens")
    expect(formatTokensShort(1_950)).toBe("2.0k tokens")
    expect(formatTokensShort(15_200)).toBe("15.2k tokens")
  })
})

describe("formatSpend", () => {
  it("gives the cost when known and the tokens when there are any; nothing when neither is", () => {
    expect(formatSpend({ costUsd: 0.42, tokens: 15_200 })).toBe("$0.42 · 15200 tokens")
    expect(formatSpend({ costUsd: 0.042, tokens: 0 })).toBe("$0.0420")
    expect(formatSpend({ costUsd: 0, tokens: 0 })).toBe("$0.0000")
    expect(formatSpend({ costUsd: null, tokens: 900 })).toBe("900 tokens")
    expect(formatSpend({ costUsd: null, tokens: 0 })).toBe("")
    expect(formatSpend({ costUsd: null, tokens: null })).toBe("")
    expect(formatSpend(null)).toBe("")
  })

  it("joins with the separator and writes the tokens as asked", () => {
    expect(formatSpend({ costUsd: 0.42, tokens: 15_200 }, { separator: ", ", tokens: formatTokensShort })).toBe("$0.42, 15.2k tokens")
    expect(formatSpend({ costUsd: null, tokens: 5000 }, { tokens: (n) => `${n.toLocaleString("en-US")} tokens` })).toBe("5,000 tokens")
  })
})

describe("task counts", () => {
  it("counts a task done when it is complete or shelved", () => {
    expect(doneTasks({ complete: 3, shelved: 1, total: 7 })).toBe(4)
    expect(tasksDone({ complete: 3, shelved: 1, total: 7 })).toEqual({ done: 4, shelved: 1, total: 7 })
    expect(tasksDone({ complete: 0, shelved: 0, total: 0 })).toEqual({ done: 0, shelved: 0, total: 0 })
  })

  it("writes the tasks done of all, naming the shelved among them", () => {
    expect(formatTaskCount({ done: 4, shelved: 0, total: 7 })).toBe("4/7")
    expect(formatTaskCount({ done: 4, shelved: 1, total: 7 })).toBe("4/7 (1 shelved)")
    expect(formatTaskCount({ done: 7, shelved: 2, total: 7 })).toBe("7/7 (2 shelved)")
    expect(formatTaskCount({ done: 0, shelved: 0, total: 0 })).toBe("0/0")
  })

  it("writes the progress as the tasks complete of all, the shelved beside them", () => {
    expect(formatTaskProgress({ complete: 3, shelved: 0, total: 7 })).toBe("3/7 complete")
    expect(formatTaskProgress({ complete: 3, shelved: 1, total: 7 })).toBe("3/7 complete, 1 shelved")
    expect(formatTaskProgress({ complete: 0, shelved: 0, total: 0 })).toBe("0/0 complete")
  })
})

describe("an agent's spend", () => {
  it("names the agent, its iterations and its cost, or that its cost is unknown (with its tokens, when it reported some)", () => {
    expect(formatAgentSpend({ agent: "claude", iterations: 3, costUsd: 1.2, tokens: 9000 })).toBe("claude 3 iterations $1.20")
    expect(formatAgentSpend({ agent: "claude", iterations: 1, costUsd: 0.042, tokens: null })).toBe("claude 1 iteration $0.0420")
    expect(formatAgentSpend({ agent: "codex:gpt-5.5", iterations: 2, costUsd: null, tokens: 15_200 })).toBe("codex:gpt-5.5 2 iterations (15.2k tokens, cost unknown)")
    expect(formatAgentSpend({ agent: "command:./agent.sh", iterations: 2, costUsd: null, tokens: null })).toBe("command:./agent.sh 2 iterations (cost unknown)")
    expect(formatAgentSpend({ agent: "pi", iterations: 1, costUsd: null, tokens: 0 })).toBe("pi 1 iteration (cost unknown)")
    // An agent that never ran spent nothing, and nothing unknown.
    expect(formatAgentSpend({ agent: "gemini", iterations: 0, costUsd: null, tokens: null })).toBe("gemini 0 iterations")
  })

  it("puts several on one line, in their order", () => {
    expect(formatAgentsSpend([
      { agent: "claude", iterations: 3, costUsd: 1.2, tokens: 9000 },
      { agent: "codex:gpt-5.5", iterations: 2, costUsd: null, tokens: null }
    ])).toBe("claude 3 iterations $1.20, codex:gpt-5.5 2 iterations (cost unknown)")
  })
})

describe("the reviews' spend", () => {
  it("counts the reviews and those approved, then the reviewers' cost (or that it is unknown) and their tokens when there are any", () => {
    expect(formatReviewSpend({ reviews: 3, approved: 1, costUsd: 0.31, tokens: 12_000 })).toBe("3 (1 approved), $0.31, 12.0k tokens")
    expect(formatReviewSpend({ reviews: 1, approved: 1, costUsd: 0.042, tokens: 0 })).toBe("1 (1 approved), $0.0420")
    expect(formatReviewSpend({ reviews: 2, approved: 0, costUsd: null, tokens: 900 })).toBe("2 (0 approved), cost unknown, 900 tokens")
    expect(formatReviewSpend({ reviews: 2, approved: 0, costUsd: null, tokens: null })).toBe("2 (0 approved), cost unknown")
  })
})
