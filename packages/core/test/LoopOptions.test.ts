import { describe, expect, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import { LoopOptions } from "../src/domain/Domain.js"
import { options } from "./loopFixture.js"

/** The first issue decoding `input` finds, with the field it is about. */
const issueOf = (input: unknown) => {
  const decoded = Schema.decodeUnknownEither(LoopOptions)(input)
  if (Either.isRight(decoded)) return null
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
  return { path: issue!.path, message: issue!.message }
}

describe("LoopOptions", () => {
  it("accepts the loop's defaults", () => {
    expect(issueOf(options())).toBeNull()
  })

  it.each([
    [{ minIterations: 0 }, "minIterations", "minIterations must be a positive whole number"],
    [{ completionPromise: "  " }, "completionPromise", "completionPromise must not be empty"],
    [{ completionPromise: "</promise>" }, "completionPromise", "completionPromise must not contain '<' or '>'"],
    [{ maxCostUsd: 0 }, "maxCostUsd", "maxCostUsd must be above 0"],
    [{ maxLimitWaitMs: -1 }, "maxLimitWaitMs", "maxLimitWaitMs must be between 0 and 7d"],
    [{ minIterations: 5, maxIterations: 3 }, "minIterations", "minIterations (5) must not be above maxIterations (3)"]
  ])("says what is wrong with %j in its own terms, naming the field", (overrides, field, message) => {
    expect(issueOf({ ...options(), ...overrides })).toEqual({ path: [field], message })
  })
})
