import { assert, describe, it } from "@effect/vitest"
import { choiceOrder, holdAfter, holdUntil, isHeld, pickAgent, switchOf } from "../src/agents/AgentChoice.js"
import { RESET_MARGIN_MS } from "../src/guards/LimitWait.js"

const agents = ["claude", "codex:gpt-5.5", "command:./agent.sh"]
const NOW = 1_000_000
const held = (entries: ReadonlyArray<readonly [string, number]>) => new Map(entries)
const limit = (over: Partial<{ resetAt: number | null; retryAfterMs: number | null; resets: boolean }> = {}) => ({
  message: "limit",
  resetAt: null,
  retryAfterMs: null,
  resets: true,
  ...over
})

describe("AgentChoice", () => {
  it("orders the list as given, and with rotation from the agent after the last", () => {
    assert.deepStrictEqual(choiceOrder(3, { rotate: false, last: 2 }), [0, 1, 2])
    assert.deepStrictEqual(choiceOrder(3, { rotate: true, last: null }), [0, 1, 2])
    assert.deepStrictEqual(choiceOrder(3, { rotate: true, last: 0 }), [1, 2, 0])
    assert.deepStrictEqual(choiceOrder(3, { rotate: true, last: 2 }), [0, 1, 2])
    assert.deepStrictEqual(choiceOrder(1, { rotate: true, last: 0 }), [0])
  })

  it("holds an agent while its hold is ahead, and not from the moment it ends", () => {
    const holds = held([["claude", NOW]])
    assert.isTrue(isHeld(holds, "claude", NOW - 1))
    assert.isFalse(isHeld(holds, "claude", NOW))
    assert.isFalse(isHeld(holds, "codex:gpt-5.5", NOW))
  })

  it("runs the first free agent of the list, passing over the held ones", () => {
    assert.deepStrictEqual(pickAgent(agents, held([]), NOW, { rotate: false, last: 1 }), { _tag: "Run", index: 0, skipped: [] })
    assert.deepStrictEqual(pickAgent(agents, held([["claude", NOW + 1]]), NOW, { rotate: false, last: 0 }), { _tag: "Run", index: 1, skipped: [0] })
    assert.deepStrictEqual(
      pickAgent(agents, held([["claude", NOW + 1], ["codex:gpt-5.5", NOW + 5]]), NOW, { rotate: false, last: 1 }),
      { _tag: "Run", index: 2, skipped: [0, 1] }
    )
    // A hold that has ended is no hold: back to the first.
    assert.deepStrictEqual(pickAgent(agents, held([["claude", NOW]]), NOW, { rotate: false, last: 1 }), { _tag: "Run", index: 0, skipped: [] })
  })

  it("with rotation, runs the next agent in turn that is free", () => {
    assert.deepStrictEqual(pickAgent(agents, held([]), NOW, { rotate: true, last: 0 }), { _tag: "Run", index: 1, skipped: [] })
    assert.deepStrictEqual(pickAgent(agents, held([["command:./agent.sh", NOW + 1]]), NOW, { rotate: true, last: 1 }), {
      _tag: "Run",
      index: 0,
      skipped: [2]
    })
  })

  it("waits only when every agent is held, for the hold that ends first (the first in the order among equals)", () => {
    const all = held([["claude", NOW + 30], ["codex:gpt-5.5", NOW + 10], ["command:./agent.sh", NOW + 20]])
    assert.deepStrictEqual(pickAgent(agents, all, NOW, { rotate: false, last: 0 }), { _tag: "Wait", index: 1, until: NOW + 10 })
    const even = held([["claude", NOW + 10], ["codex:gpt-5.5", NOW + 10], ["command:./agent.sh", NOW + 10]])
    assert.deepStrictEqual(pickAgent(agents, even, NOW, { rotate: false, last: 2 }), { _tag: "Wait", index: 0, until: NOW + 10 })
    assert.deepStrictEqual(pickAgent(agents, even, NOW, { rotate: true, last: 0 }), { _tag: "Wait", index: 1, until: NOW + 10 })
    const forever = held([["claude", Number.POSITIVE_INFINITY], ["codex:gpt-5.5", Number.POSITIVE_INFINITY], ["command:./agent.sh", NOW + 99]])
    assert.deepStrictEqual(pickAgent(agents, forever, NOW, { rotate: false, last: null }), { _tag: "Wait", index: 2, until: NOW + 99 })
  })

  it("holds a limited agent until its reset, its retry-after, or a backoff doubling with each limit in a row", () => {
    assert.strictEqual(holdUntil(limit({ resetAt: NOW + 20_000 }), NOW, 0), NOW + 20_000)
    // A reset already past holds it for the margin: the provider's clock may be behind.
    assert.strictEqual(holdUntil(limit({ resetAt: NOW }), NOW, 0), NOW + RESET_MARGIN_MS)
    assert.strictEqual(holdUntil(limit({ resetAt: NOW - 5 }), NOW, 0), NOW + RESET_MARGIN_MS)
    assert.strictEqual(holdUntil(limit({ retryAfterMs: 30_000 }), NOW, 3), NOW + 30_000)
    assert.strictEqual(holdUntil(limit({ retryAfterMs: 10 }), NOW, 0), NOW + 1_000)
    assert.strictEqual(holdUntil(limit(), NOW, 0), NOW + 60_000)
    assert.strictEqual(holdUntil(limit(), NOW, 1), NOW + 120_000)
    // A limit that does not reset by waiting: until the time the agent named, else for the rest of the run.
    assert.strictEqual(holdUntil(limit({ resets: false, resetAt: NOW + 99_000 }), NOW, 0), NOW + 99_000)
    assert.strictEqual(holdUntil(limit({ resets: false, retryAfterMs: 5_000 }), NOW, 0), NOW + 5_000)
    assert.strictEqual(holdUntil(limit({ resets: false }), NOW, 4), Number.POSITIVE_INFINITY)
  })

  it("counts the limits without a reset time or retry-after met in a row, for the backoff of the next", () => {
    assert.deepStrictEqual(holdAfter(limit(), NOW, 0), { until: NOW + 60_000, backoffs: 1 })
    assert.deepStrictEqual(holdAfter(limit(), NOW, 1), { until: NOW + 120_000, backoffs: 2 })
    assert.deepStrictEqual(holdAfter(limit({ resetAt: NOW + 5_000 }), NOW, 1), { until: NOW + 5_000, backoffs: 1 })
    assert.deepStrictEqual(holdAfter(limit({ retryAfterMs: 5_000 }), NOW, 2), { until: NOW + 5_000, backoffs: 2 })
    assert.deepStrictEqual(holdAfter(limit({ resetAt: NOW + 5_000, retryAfterMs: 9_000 }), NOW, 0), { until: NOW + 5_000, backoffs: 0 })
  })

  it("tells of a switch off a limited agent, and of the return to an earlier one once it is free", () => {
    const holds = held([["claude", NOW + 20_000]])
    assert.deepStrictEqual(switchOf(agents, holds, NOW, 0, { _tag: "Run", index: 1, skipped: [0] }, false), {
      from: "claude",
      to: "codex:gpt-5.5",
      why: "limited",
      held: "claude",
      until: NOW + 20_000
    })
    // The first iteration of a run whose first agent is held: from the agent passed over.
    assert.deepStrictEqual(switchOf(agents, holds, NOW, null, { _tag: "Run", index: 1, skipped: [0] }, false)?.from, "claude")
    // Staying on the fallback is no switch.
    assert.isNull(switchOf(agents, holds, NOW, 1, { _tag: "Run", index: 1, skipped: [0] }, false))
    assert.deepStrictEqual(switchOf(agents, held([]), NOW, 1, { _tag: "Run", index: 0, skipped: [] }, false), {
      from: "codex:gpt-5.5",
      to: "claude",
      why: "lifted",
      held: "claude",
      until: null
    })
    // Onward down the list without a hold, the first run, or rotation's turns: none.
    assert.isNull(switchOf(agents, held([]), NOW, 0, { _tag: "Run", index: 1, skipped: [] }, false))
    assert.isNull(switchOf(agents, held([]), NOW, null, { _tag: "Run", index: 0, skipped: [] }, false))
    assert.isNull(switchOf(agents, held([]), NOW, 1, { _tag: "Run", index: 0, skipped: [] }, true))
    assert.isNull(switchOf(agents, held([]), NOW, 0, { _tag: "Run", index: 0, skipped: [] }, true))
    // Off the agent that ran last once a limit holds it, with rotation too, even when its turn was over anyway.
    assert.deepStrictEqual(switchOf(agents, holds, NOW, 0, { _tag: "Run", index: 1, skipped: [] }, true), {
      from: "claude",
      to: "codex:gpt-5.5",
      why: "limited",
      held: "claude",
      until: NOW + 20_000
    })
    // Its hold over, the last agent is no reason.
    assert.isNull(switchOf(agents, holds, NOW + 20_000, 0, { _tag: "Run", index: 1, skipped: [] }, true))
    // Rotation passing over a held agent is told.
    assert.deepStrictEqual(
      switchOf(agents, held([["command:./agent.sh", NOW + 5]]), NOW, 1, { _tag: "Run", index: 0, skipped: [2] }, true),
      { from: "codex:gpt-5.5", to: "claude", why: "limited", held: "command:./agent.sh", until: NOW + 5 }
    )
  })
})
