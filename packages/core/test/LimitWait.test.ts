import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Option, Schedule, TestClock } from "effect"
import {
  backoffMs,
  type HeldLimit,
  type LimitPlan,
  limitWaits,
  MAX_SINGLE_SLEEP_MS,
  planLimitWait,
  sleepLong,
  sleepPieces,
  type UsageLimit
} from "../src/guards/LimitWait.js"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

const limit = (overrides: Partial<UsageLimit> = {}): UsageLimit => ({
  message: "You've hit your limit",
  resetAt: null,
  retryAfterMs: null,
  resets: true,
  ...overrides
})

/**
 * Feeds `limits` to the schedule one after another, as the loop does with each limited attempt,
 * moving the test clock by each planned wait: the waits made and the plan it ended on.
 */
const drive = (settings: { maxLimitWaitMs: number; deadline: number | null }, limits: ReadonlyArray<UsageLimit | HeldLimit>) =>
  Effect.gen(function*() {
    const plans: Array<LimitPlan> = []
    const driver = yield* Schedule.driver(limitWaits(settings).pipe(Schedule.tapOutput((plan) => Effect.sync(() => plans.push(plan)))))
    const waits: Array<number> = []
    for (const [i, next] of limits.entries()) {
      const started = yield* Clock.currentTimeMillis
      const fiber = yield* Effect.fork(Effect.option(driver.next(next)))
      for (let spins = 0; plans.length <= i && spins < 1000; spins++) yield* Effect.yieldNow()
      const plan = plans[i]!
      if (plan._tag === "Wait" && plan.delayMs > 0) {
        // One millisecond short of the planned wait, the schedule is still sleeping.
        yield* TestClock.adjust(Duration.millis(plan.delayMs - 1))
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "the wait ended early")
        yield* TestClock.adjust(Duration.millis(1))
      }
      if (Option.isNone(yield* Fiber.join(fiber))) return { waits, last: plan }
      waits.push((yield* Clock.currentTimeMillis) - started)
    }
    return { waits, last: plans.at(-1)! }
  })

describe("usage-limit waits (fake clock)", () => {
  it.effect("waits until the reset time the agent gave, plus a minute", () =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const { waits, last } = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: null }, [limit({ resetAt: now + 10 * MINUTE })])
      assert.deepStrictEqual(waits, [11 * MINUTE])
      assert.deepInclude(last, { _tag: "Wait", basis: "reset time", resumeAt: now + 11 * MINUTE })
    }))

  it.effect("honours the first retry-after, then backs off one that keeps coming back", () =>
    Effect.gen(function*() {
      const limits = [limit({ retryAfterMs: 2_000 }), limit({ retryAfterMs: 30_000 }), limit({ retryAfterMs: 0 }), limit({ retryAfterMs: 10 * MINUTE })]
      const { waits } = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: null }, limits)
      assert.deepStrictEqual(waits, [2_000, MINUTE, 2 * MINUTE, 10 * MINUTE])
    }))

  it.effect("never reruns the agent at once, whatever retry-after says", () =>
    Effect.gen(function*() {
      const { waits } = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: null }, [limit({ retryAfterMs: 0 })])
      assert.deepStrictEqual(waits, [1_000])
    }))

  it.effect("backs off from a minute, doubling up to half an hour, when the agent gives no time", () =>
    Effect.gen(function*() {
      const { waits } = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: null }, Array.from({ length: 7 }, () => limit()))
      assert.deepStrictEqual(waits, [1, 2, 4, 8, 16, 30, 30].map((m) => m * MINUTE))
      assert.deepStrictEqual([0, 5, 6, 40].map(backoffMs), [MINUTE, 30 * MINUTE, 30 * MINUTE, 30 * MINUTE])
    }))

  it.effect("never waits longer in all than --max-limit-wait, then gives up saying when it would have resumed", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const { waits, last } = yield* drive({ maxLimitWaitMs: 10 * MINUTE, deadline: null }, Array.from({ length: 6 }, () => limit()))
      // 1 + 2 + 4 minutes, then the 3 minutes left instead of 8.
      assert.deepStrictEqual(waits, [1, 2, 4, 3].map((m) => m * MINUTE))
      assert.deepStrictEqual(last, {
        _tag: "GiveUp",
        resumeAt: start + 10 * MINUTE + 16 * MINUTE,
        why: "the limit did not lift within --max-limit-wait (10m00s)"
      })
    }))

  it.effect("gives up at once on a known reset past --max-limit-wait, recording the reset", () =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const { waits, last } = yield* drive({ maxLimitWaitMs: HOUR, deadline: null }, [limit({ resetAt: now + 5 * HOUR })])
      assert.deepStrictEqual(waits, [])
      assert.deepInclude(last, { _tag: "GiveUp", resumeAt: now + 5 * HOUR + MINUTE })
      assert.strictEqual(yield* Clock.currentTimeMillis, now)
    }))

  it.effect("gives up at once on a quota that does not reset, keeping the reset time the agent gave", () =>
    Effect.gen(function*() {
      const { waits, last } = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: null }, [limit({ resets: false })])
      assert.deepStrictEqual(waits, [])
      assert.deepStrictEqual(last, { _tag: "GiveUp", resumeAt: null, why: "the usage limit does not reset by waiting" })
      const now = yield* Clock.currentTimeMillis
      assert.deepInclude(planLimitWait(limit({ resets: false, resetAt: now + DAY }), now, { waitedMs: 0, backoffs: 0 }, { maxLimitWaitMs: 6 * HOUR, deadline: null }), {
        _tag: "GiveUp",
        resumeAt: now + DAY + MINUTE
      })
    }))

  it.effect("does not wait with --max-limit-wait 0", () =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const { waits, last } = yield* drive({ maxLimitWaitMs: 0, deadline: null }, [limit({ retryAfterMs: 2_000 })])
      assert.deepStrictEqual(waits, [])
      assert.deepStrictEqual(last, { _tag: "GiveUp", resumeAt: now + 2_000, why: "the limit lifts at 1970-01-01T00:00:02Z, past --max-limit-wait is 0" })
    }))

  it.effect("never waits past --max-duration", () =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const known = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: now + 5 * MINUTE }, [limit({ resetAt: now + 10 * MINUTE })])
      assert.deepStrictEqual(known.waits, [])
      assert.match((known.last as Extract<LimitPlan, { _tag: "GiveUp" }>).why, /past --max-duration$/)
      const start = yield* Clock.currentTimeMillis
      const backoff = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: start + 90_000 }, [limit(), limit(), limit()])
      assert.deepStrictEqual(backoff.waits, [60_000, 30_000])
      assert.deepInclude(backoff.last, { _tag: "GiveUp", why: "the limit did not lift within --max-duration" })
    }))

  it.effect("never plans a single sleep of 2^31 ms or more, and sleeps longer spans in pieces", () =>
    Effect.gen(function*() {
      for (const resetIn of [0, MINUTE, 6 * DAY, 30 * DAY, 400 * DAY]) {
        for (const maxLimitWaitMs of [0, HOUR, 7 * DAY]) {
          for (const backoffs of [0, 3, 50]) {
            const plan = planLimitWait(limit({ resetAt: resetIn === 0 ? null : resetIn }), 0, { waitedMs: 0, backoffs }, { maxLimitWaitMs, deadline: null })
            if (plan._tag === "Wait") assert.isBelow(plan.delayMs, 2 ** 31)
          }
        }
      }
      const pieces = sleepPieces(40 * DAY)
      assert.isTrue(pieces.every((piece) => piece > 0 && piece <= MAX_SINGLE_SLEEP_MS && piece < 2 ** 31))
      assert.strictEqual(pieces.reduce((a, b) => a + b, 0), 40 * DAY)
      assert.deepStrictEqual(sleepPieces(0), [])

      const fiber = yield* Effect.fork(sleepLong(40 * DAY))
      yield* TestClock.adjust(Duration.millis(40 * DAY - 1))
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust(Duration.millis(1))
      yield* Fiber.join(fiber)
    }))
})

describe("planning one usage-limit wait", () => {
  const now = Date.UTC(2026, 10, 23, 14, 0)

  it("waits from now until the reset the agent gave, plus a minute", () => {
    assert.deepStrictEqual(planLimitWait(limit({ resetAt: now + 5 * MINUTE }), now, { waitedMs: 0, backoffs: 0 }, { maxLimitWaitMs: 6 * HOUR, deadline: null }), {
      _tag: "Wait",
      delayMs: 6 * MINUTE,
      resumeAt: now + 6 * MINUTE,
      basis: "reset time"
    })
  })

  it("waits exactly as long as --max-limit-wait allows, and names that cap when the wait would be longer", () => {
    const settings = { maxLimitWaitMs: 10 * MINUTE, deadline: now + 10 * MINUTE }
    assert.deepStrictEqual(planLimitWait(limit({ retryAfterMs: 10 * MINUTE }), now, { waitedMs: 0, backoffs: 0 }, settings), {
      _tag: "Wait",
      delayMs: 10 * MINUTE,
      resumeAt: now + 10 * MINUTE,
      basis: "retry-after"
    })
    // The cap and the deadline fall together: the cap is named.
    assert.deepStrictEqual(planLimitWait(limit({ retryAfterMs: 11 * MINUTE }), now, { waitedMs: 0, backoffs: 0 }, settings), {
      _tag: "GiveUp",
      resumeAt: now + 11 * MINUTE,
      why: "the limit lifts at 2026-11-23T14:11:00Z, past --max-limit-wait (10m00s)"
    })
  })

  it("backs off from now when the agent gives no time", () => {
    assert.deepStrictEqual(planLimitWait(limit(), now, { waitedMs: 0, backoffs: 1 }, { maxLimitWaitMs: 6 * HOUR, deadline: null }), {
      _tag: "Wait",
      delayMs: 2 * MINUTE,
      resumeAt: now + 2 * MINUTE,
      basis: "backoff"
    })
  })

  it.effect("does not count a wait for a known reset as a backoff", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const { waits } = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: null }, [limit({ resetAt: start + 4 * MINUTE }), limit()])
      assert.deepStrictEqual(waits, [5 * MINUTE, MINUTE])
    }))

  it("waits for another loop's limit until it lifts, to the millisecond, within the same caps", () => {
    const now = Date.UTC(2026, 10, 23, 14, 0)
    const none = { waitedMs: 0, backoffs: 0 }
    assert.deepStrictEqual(planLimitWait({ heldUntil: now + 90_000 }, now, none, { maxLimitWaitMs: 6 * HOUR, deadline: null }), {
      _tag: "Wait",
      delayMs: 90_000,
      resumeAt: now + 90_000,
      basis: "another loop's limit"
    })
    assert.deepStrictEqual(planLimitWait({ heldUntil: now + 90_000 }, now, { waitedMs: 5 * HOUR, backoffs: 0 }, { maxLimitWaitMs: 5 * HOUR + MINUTE, deadline: null }), {
      _tag: "GiveUp",
      resumeAt: now + 90_000,
      why: "the limit lifts at 2026-11-23T14:01:30Z, past --max-limit-wait (5h01m)"
    })
    assert.deepInclude(planLimitWait({ heldUntil: now + 90_000 }, now, none, { maxLimitWaitMs: 6 * HOUR, deadline: now + MINUTE }), {
      _tag: "GiveUp",
      why: "the limit lifts at 2026-11-23T14:01:30Z, past --max-duration"
    })
  })

  it("says whose limit it waits for: one this loop met in an earlier iteration, or another loop's", () => {
    const now = Date.UTC(2026, 10, 23, 14, 0)
    const none = { waitedMs: 0, backoffs: 0 }
    const settings = { maxLimitWaitMs: 6 * HOUR, deadline: null }
    const basis = (metBy: "this loop" | "another loop") => planLimitWait({ heldUntil: now + MINUTE, metBy }, now, none, settings)
    assert.deepStrictEqual(basis("this loop"), { _tag: "Wait", delayMs: MINUTE, resumeAt: now + MINUTE, basis: "an earlier limit" })
    assert.deepStrictEqual(basis("another loop"), { _tag: "Wait", delayMs: MINUTE, resumeAt: now + MINUTE, basis: "another loop's limit" })
  })

  it.effect("counts a wait for another loop's limit toward --max-limit-wait, not as a backoff", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const { waits, last } = yield* drive({ maxLimitWaitMs: 4 * MINUTE, deadline: null }, [{ heldUntil: start + 3 * MINUTE }, limit(), limit()])
      // The backoff after it is the first (a minute); the one after that finds the four minutes used up.
      assert.deepStrictEqual(waits, [3 * MINUTE, MINUTE])
      assert.deepInclude(last, { _tag: "GiveUp", why: "the limit did not lift within --max-limit-wait (4m00s)" })
    }))

  it.effect("backs off from the first after a wait of known length, whether another loop's limit or the agent's reset time", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const held = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: null }, [{ heldUntil: start + 3 * MINUTE }, limit()])
      assert.deepStrictEqual(held.waits, [3 * MINUTE, MINUTE])
      const reset = yield* Clock.currentTimeMillis
      const known = yield* drive({ maxLimitWaitMs: 6 * HOUR, deadline: null }, [limit({ resetAt: reset + 10 * MINUTE }), limit()])
      assert.deepStrictEqual(known.waits, [11 * MINUTE, MINUTE])
    }))
})
