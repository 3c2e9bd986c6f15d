import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { fromError, retryDelayOf, retryingAfterLimit } from "../src/GeminiLimit.js"

const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8")
const apiError = (error: object) => `[API Error: ${JSON.stringify({ error })}]`

describe("GeminiLimit", () => {
  it("reads the retry delays gemini and the API name, in seconds or milliseconds", () => {
    assert.strictEqual(retryDelayOf("Quota exceeded for metric: x, limit: 50. Please retry in 37.5s."), 37_500)
    assert.strictEqual(retryDelayOf("Suggested retry after 37s.. Retrying after 38423ms..."), 37_000)
    assert.strictEqual(retryDelayOf("please retry after 250ms"), 250)
    assert.strictEqual(retryDelayOf("Please retry in 2 s"), 2_000)
    assert.strictEqual(retryDelayOf("Please Retry In 3S"), 3_000)
    assert.strictEqual(retryDelayOf("retry in 12.75ms"), 13)
    assert.strictEqual(retryDelayOf("retry in 0.0004s"), 0)
    assert.isNull(retryDelayOf("retry in 5 minutes"))
    assert.isNull(retryDelayOf("retry in 5sec"))
    assert.isNull(retryDelayOf("retry in .5s"))
    assert.isNull(retryDelayOf("Quota exceeded"))
  })

  it("takes a 429, RESOURCE_EXHAUSTED or a quota in an API error for a limit, with the API's message", () => {
    const limit = (message: string) => ({ message, resetAt: null, retryAfterMs: null, resets: true })
    assert.deepStrictEqual(fromError(apiError({ code: 429, message: "Too many requests, slow down." })), limit("Too many requests, slow down."))
    assert.deepStrictEqual(fromError(apiError({ code: 503, message: "Out of capacity.", status: "RESOURCE_EXHAUSTED" })), limit("Out of capacity."))
    assert.deepStrictEqual(fromError(apiError({ code: 403, message: " Quota exceeded for this project. ", status: "PERMISSION_DENIED" })), limit("Quota exceeded for this project."))
    assert.isNull(fromError(apiError({ code: 400, message: "bad", status: "INVALID_ARGUMENT" })))
    // Words elsewhere in the body do not make an ordinary error a limit.
    assert.isNull(fromError(apiError({ code: 400, message: "bad", status: "INVALID_ARGUMENT", details: [{ reason: "quota project not set" }] })))
  })

  it("takes a limit's words in a message that is not an API error body for a limit", () => {
    for (const message of ["Quota exceeded for quota metric 'Requests per day'", "You hit the rate limit", "rate-limited", "HTTP 429 Too Many Requests", "Usage limit reached", "RESOURCE_EXHAUSTED"]) {
      assert.deepStrictEqual(fromError(message), { message, resetAt: null, retryAfterMs: null, resets: true })
    }
    for (const message of ["Request contains an invalid argument.", "quotas are fine", "subquota", "4290 tokens", "1429 tokens", "[API Error: socket hang up]"]) {
      assert.isNull(fromError(message), message)
    }
    assert.strictEqual(fromError("\n Quota exceeded \n")!.message, "Quota exceeded")
  })

  it("waits as long as the API's RetryInfo says, else as its message says, else as gemini last printed", () => {
    const withInfo = apiError({ code: 429, message: "Please retry in 5s.", details: [{ retryDelay: "37s" }] })
    assert.strictEqual(fromError(withInfo, 9_000)!.retryAfterMs, 37_000)
    assert.strictEqual(fromError(apiError({ code: 429, message: "Please retry in 5s." }), 9_000)!.retryAfterMs, 5_000)
    assert.strictEqual(fromError(apiError({ code: 429, message: "Too many requests" }), 9_000)!.retryAfterMs, 9_000)
    assert.strictEqual(fromError("Quota exceeded. Please retry in 1.5s.", 9_000)!.retryAfterMs, 1_500)
    assert.strictEqual(fromError("Quota exceeded", 9_000)!.retryAfterMs, 9_000)
    assert.strictEqual(fromError("Quota exceeded")!.retryAfterMs, null)
  })

  it("takes a billing quota for one that waiting does not restore, unless a retry delay is given", () => {
    assert.isFalse(fromError("You exceeded your current quota, please check your plan and billing details.")!.resets)
    assert.isFalse(fromError("Usage limit reached: upgrade your plan to continue")!.resets)
    assert.isFalse(fromError(apiError({ code: 429, message: "Quota exceeded: check your billing account" }))!.resets)
    assert.isTrue(fromError("Quota exceeded: check your billing account", 30_000)!.resets)
    assert.isTrue(fromError("Quota exceeded: check your billing account. Please retry in 30s")!.resets)
  })

  it("recognises gemini retrying after a limit on stderr, with the delay it names", () => {
    assert.deepStrictEqual(retryingAfterLimit(fixture("limit-retry.stderr.txt").split("\n")[0]!), { retryAfterMs: 37_500 })
    assert.deepStrictEqual(retryingAfterLimit("Attempt 12 failed with status 429. Retrying with backoff..."), { retryAfterMs: null })
    assert.isNull(retryingAfterLimit("Attempt 1 failed: socket hang up"))
    assert.isNull(retryingAfterLimit("Suggested retry after 37s.. Retrying after 38423ms..."))
    assert.isNull(retryingAfterLimit("Retry Attempt 1 failed: Quota exceeded"))
    assert.isNull(retryingAfterLimit("Attempt 1 failedover to another quota"))
  })
})
