import { assert, describe, it } from "@effect/vitest"
import { fromError, retryDelayOf } from "../src/PiLimit.js"

describe("PiLimit", () => {
  it("reads the retry delays providers name, in hours, minutes, seconds and milliseconds", () => {
    assert.strictEqual(retryDelayOf("429 Rate limit reached, retry after 20s"), 20_000)
    assert.strictEqual(retryDelayOf("please try again in 1m30s"), 90_000)
    assert.strictEqual(retryDelayOf("Please try again in 1h"), 3_600_000)
    assert.strictEqual(retryDelayOf("Please try again in 1.5s."), 1_500)
    assert.strictEqual(retryDelayOf("retry after 250ms"), 250)
    assert.strictEqual(retryDelayOf("retry in 2 m 5 s"), 125_000)
    assert.strictEqual(retryDelayOf("try again in  45s"), 45_000)
    assert.strictEqual(retryDelayOf("Retry After 3S"), 3_000)
    assert.strictEqual(retryDelayOf("retry after 12.75ms"), 13)
    assert.strictEqual(retryDelayOf("retry after 0.0004s"), 0)
    assert.isNull(retryDelayOf("retry after2s"))
    assert.isNull(retryDelayOf("retry 5s"))
    assert.isNull(retryDelayOf("retry after a while"))
    assert.isNull(retryDelayOf("429 Rate limit reached"))
  })

  it("takes a 429 or 529 status, a rate limit, a quota or too many requests for a limit", () => {
    for (const message of [
      "429 Rate limit reached, please slow down",
      "529 overloaded_error",
      "429",
      "Rate limit exceeded",
      "rate-limited by the provider",
      "Quota exceeded",
      "Usage limit reached for this month",
      "RESOURCE_EXHAUSTED",
      "Too Many Requests"
    ]) {
      assert.deepStrictEqual(fromError(message), { message, resetAt: null, retryAfterMs: null, resets: true }, message)
    }
    assert.deepStrictEqual(fromError(" 429 slow down\n"), { message: "429 slow down", resetAt: null, retryAfterMs: null, resets: true })
  })

  it("takes no other error for a limit, nor a status that is not the message's first word", () => {
    for (const message of ["400 bad request", "500 internal error 429", "4290 tokens exceed the context", "quotas are fine", "subquota", "model overloaded"]) {
      assert.isNull(fromError(message), message)
    }
  })

  it("waits as the provider says; a billing or credit quota without a delay does not reset", () => {
    assert.strictEqual(fromError("429 Rate limit reached, retry after 20s")!.retryAfterMs, 20_000)
    for (const message of [
      "429 You exceeded your current quota, please check your plan and billing details.",
      "429 Your credit balance is too low",
      "429 insufficient_quota",
      "429 insufficient quota",
      "429 Usage limit reached: upgrade your plan"
    ]) {
      assert.isFalse(fromError(message)!.resets, message)
    }
    assert.isTrue(fromError("429 check your billing details or retry after 1m")!.resets)
  })
})
