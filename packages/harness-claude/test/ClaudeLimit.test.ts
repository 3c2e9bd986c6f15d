import { assert, describe, it } from "@effect/vitest"
import { ClaudeLimit } from "../src/index.js"

describe("ClaudeLimit", () => {
  it("reads epoch times in seconds or milliseconds, as numbers or digit strings, as milliseconds", () => {
    assert.strictEqual(ClaudeLimit.epochMs(1768500000), 1768500000000)
    assert.strictEqual(ClaudeLimit.epochMs(1768500000123), 1768500000123)
    assert.strictEqual(ClaudeLimit.epochMs("1768500000"), 1768500000000)
    assert.strictEqual(ClaudeLimit.epochMs("soon"), null)
    assert.strictEqual(ClaudeLimit.epochMs(undefined), null)
    assert.strictEqual(ClaudeLimit.epochMs(0), null)
  })

  it("finds the next wall-clock reset time in the named zone, today or tomorrow", () => {
    const winterMorning = Date.UTC(2026, 0, 15, 10, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3pm (Europe/Paris)", winterMorning), Date.UTC(2026, 0, 15, 14, 0))
    const winterEvening = Date.UTC(2026, 0, 15, 15, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3pm (Europe/Paris)", winterEvening), Date.UTC(2026, 0, 16, 14, 0))
    const summer = Date.UTC(2026, 6, 1, 12, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3:30pm (America/New_York)", summer), Date.UTC(2026, 6, 1, 19, 30))
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 12am (UTC)", summer), Date.UTC(2026, 6, 2, 0, 0))
  })

  it("gives no reset time for an unknown zone, an impossible time, or none at all", () => {
    const now = Date.UTC(2026, 0, 15, 10, 0)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 3pm (Mars/Olympus)", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("resets 13pm (UTC)", now), null)
    assert.strictEqual(ClaudeLimit.clockResetAt("You've hit your limit", now), null)
  })
})
