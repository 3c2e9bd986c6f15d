import { assert, describe, it } from "@effect/vitest"
import { apiWords, fromError, fromHeartbeat, fromRetrying, resetTimeOf } from "../src/QwenLimit.js"

// The lines are qwen 0.24.4's own, as it printed them against a fake server answering HTTP 429.
const now = Date.parse("2026-11-29T08:00:00Z")

describe("QwenLimit", () => {
  it("reads qwen waiting out a limit (QWEN_CODE_UNATTENDED_RETRY) as a limit, after the wait it names", () => {
    assert.deepStrictEqual(fromHeartbeat("[qwen-code] Waiting for API capacity... attempt 1, retry in 3570s"), {
      message: "qwen is waiting for API capacity: its model API answered with a rate or usage limit (HTTP 429 or 529); next try in 3570s",
      resetAt: null,
      retryAfterMs: 3_570_000,
      resets: true
    })
    assert.strictEqual(fromHeartbeat("  [qwen-code] Waiting for API capacity... attempt 12, retry in 5s ")!.retryAfterMs, 5_000)
    for (const line of [
      "Waiting for API capacity... attempt 1, retry in 30s",
      "[qwen-code] Waiting for API capacity... attempt 1, retry in soon",
      "say [qwen-code] Waiting for API capacity... attempt 1, retry in 3s",
      "[qwen-code] Waiting for API capacity... attempt 1, retry in 30s or when the key is changed"
    ]) {
      assert.isNull(fromHeartbeat(line), line)
    }
  })

  it("reads qwen retrying after a rate limit as a limit, with the API's words and qwen's wait", () => {
    assert.deepStrictEqual(fromRetrying("Retrying in 60s (attempt 1/10): [API Error: 429 Rate limit reached for requests]"), {
      message: "429 Rate limit reached for requests",
      resetAt: null,
      retryAfterMs: 60_000,
      resets: true
    })
    assert.deepStrictEqual(fromRetrying("Retrying in 120s (attempt 2/10): [API Error: 429 You exceeded your current quota, please check your plan and billing details.]"), {
      message: "429 You exceeded your current quota, please check your plan and billing details.",
      resetAt: null,
      retryAfterMs: 120_000,
      resets: false
    })
    assert.deepStrictEqual(fromRetrying("Retrying in 60s (attempt 1/10)"), {
      message: "qwen's model API answered with a rate limit",
      resetAt: null,
      retryAfterMs: 60_000,
      resets: true
    })
    // Indented or ended with a carriage return, as a terminal may pass it; at any attempt of any count.
    assert.strictEqual(fromRetrying("  Retrying in 5s (attempt 12/20): [API Error: 429 Too many requests]\r")!.retryAfterMs, 5_000)
    assert.strictEqual(fromRetrying("Retrying in 5s (attempt 12/20): [API Error: 429 Too many requests]")!.message, "429 Too many requests")
    for (const line of [
      "Retrying provider attempt (0 buffered tool call(s) discarded).",
      "Retrying in a while (attempt 1/10)",
      "Falling back from a to b (0 buffered tool call(s) discarded).",
      "[hook] Retrying in 60s (attempt 1/10)",
      "Retrying in 60s (attempt 1/10) after the tool call"
    ]) {
      assert.isNull(fromRetrying(line), line)
    }
  })

  it("reads a quota spent until a reset, which qwen does not retry, as a limit lifting then", () => {
    const text = "Quota exhausted: Quota exceeded: your daily quota will reset at 2026-11-30T00:00:00Z\n\nPlease retry after the reset time, or switch to another API key / auth method."
    assert.deepStrictEqual(fromError(text, now), {
      message: "Quota exhausted: Quota exceeded: your daily quota will reset at 2026-11-30T00:00:00Z",
      resetAt: Date.parse("2026-11-30T00:00:00Z"),
      retryAfterMs: null,
      resets: true
    })
    // A reset that cannot be read, or is past, is not guessed.
    assert.strictEqual(fromError("Quota exhausted: quota exceeded, will reset at midnight", now)!.resetAt, null)
    assert.strictEqual(fromError("Quota exhausted: quota exceeded, reset at 2026-11-28T00:00:00Z", now)!.resetAt, null)
    // Read after the blank line qwen's error may start with; its message is the first line, trimmed.
    assert.deepStrictEqual(fromError("\nQuota exhausted: daily quota exceeded, reset at 2026-11-30T00:00:00Z  \n\nPlease retry after the reset time.", now), {
      message: "Quota exhausted: daily quota exceeded, reset at 2026-11-30T00:00:00Z",
      resetAt: Date.parse("2026-11-30T00:00:00Z"),
      retryAfterMs: null,
      resets: true
    })
  })

  it("reads the end of Qwen OAuth's free tier as a quota that waiting does not restore", () => {
    const limit = fromError("Qwen OAuth free tier has been discontinued as of 2026-04-15.\n\nTo continue using Qwen Code, ...", now)
    assert.deepStrictEqual(limit, { message: "Qwen OAuth free tier has been discontinued as of 2026-04-15.", resetAt: null, retryAfterMs: null, resets: false })
    assert.isTrue(fromError("Qwen OAuth quota exceeded: try tomorrow", now)!.resets)
  })

  it("reads an API error with HTTP 429, 529 or a limit's words as a limit; billing as one that does not reset", () => {
    const limit = (message: string, resets = true) => ({ message, resetAt: null, retryAfterMs: null, resets })
    assert.deepStrictEqual(fromError("[API Error: 429 Rate limit reached for requests]", now), limit("429 Rate limit reached for requests"))
    assert.deepStrictEqual(fromError("[API Error: 529 Overloaded]", now), limit("529 Overloaded"))
    assert.deepStrictEqual(fromError("[API Error: Throttling.AllocationQuota: Allocated quota exceeded]", now), limit("Throttling.AllocationQuota: Allocated quota exceeded"))
    assert.deepStrictEqual(
      fromError("[API Error: insufficient balance]\nPossible quota limitations in place or slow response times detected. Please wait and try again later.", now),
      limit("insufficient balance")
    )
    assert.deepStrictEqual(
      fromError("[API Error: 429 You exceeded your current quota, please check your plan and billing details.]", now),
      limit("429 You exceeded your current quota, please check your plan and billing details.", false)
    )
    assert.deepStrictEqual(fromError("[API Error: 429 Arrearage: your account is overdue]", now), limit("429 Arrearage: your account is overdue", false))
    assert.deepStrictEqual(fromError("[API Error: 429 insufficient_quota]", now), limit("429 insufficient_quota", false))
    // A limit's words without a status.
    for (const words of ["Rate limit exceeded for model qwen3-coder-plus", "rate-limit reached, slow down"]) {
      assert.deepStrictEqual(fromError(`[API Error: ${words}]`, now), limit(words), words)
    }
  })

  it("reads no limit in an ordinary error, nor in text that is not qwen's report of one", () => {
    for (const text of [
      "[API Error: 400 bad request: context too long]",
      "[API Error: Connection error. (cause: connect ECONNREFUSED 127.0.0.1:18116)]",
      "[API Error: 4290 tokens is too many for this model]",
      "No auth type is selected. Please configure an auth type (e.g. via settings or `--auth-type`) before running in non-interactive mode.",
      "The rate limit is 429 requests a minute.",
      "[API Error: 400 max_tokens must be at most 10529]",
      "The last run failed: [API Error: 429 Rate limit reached for requests]",
      "[API Error: 429 Rate limit reached for requests]. Try again later.",
      "The model said: Quota exhausted: come back tomorrow",
      "Using Qwen OAuth quota exceeded the plan",
      ""
    ]) {
      assert.isNull(fromError(text, now), text)
    }
  })

  it("takes the API's words out of qwen's report", () => {
    assert.strictEqual(apiWords("[API Error: 400 bad request]"), "400 bad request")
    assert.strictEqual(apiWords(" [API Error: 429 slow down]\nPossible quota limitations in place."), "429 slow down")
    assert.strictEqual(apiWords("Quota exhausted: x\n\nPlease retry"), "Quota exhausted: x")
    // After a blank line, before a line ended with a carriage return, with spaces inside the brackets.
    assert.strictEqual(apiWords("\n[API Error: 429 slow down]"), "429 slow down")
    assert.strictEqual(apiWords("[API Error: 429 slow down]\r\nPossible quota limitations in place."), "429 slow down")
    assert.strictEqual(apiWords("[API Error:  429 Too many requests ]"), "429 Too many requests")
    // Brackets in the API's words are its own: the report ends at the last one.
    assert.strictEqual(apiWords("[API Error: 400 Invalid value for 'messages[2].content']"), "400 Invalid value for 'messages[2].content'")
  })

  it("reads a reset time after now from the words `reset at` or `resets on`", () => {
    assert.strictEqual(resetTimeOf("will reset at 2026-11-30T00:00:00Z.", now), Date.parse("2026-11-30T00:00:00Z"))
    assert.strictEqual(resetTimeOf("Resets on Mon, 30 Nov 2026 01:00:00 GMT", now), Date.parse("2026-11-30T01:00:00Z"))
    assert.isNull(resetTimeOf("will reset soon", now))
    assert.isNull(resetTimeOf("reset at 2020-01-01T00:00:00Z", now))
    // A reset at this very moment is not after now; one before the line's trailing spaces is read.
    assert.isNull(resetTimeOf("reset at 2026-11-29T08:00:00Z", now))
    assert.strictEqual(resetTimeOf("will reset at 2026-11-30T00:00:00Z  \nPlease retry", now), Date.parse("2026-11-30T00:00:00Z"))
  })
})
