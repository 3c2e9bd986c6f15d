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
    [{ minIterations: 0 }, "minIterations", "must be a positive whole number"],
    [{ completionPromise: "  " }, "completionPromise", "must not be empty"],
    [{ completionPromise: "</promise>" }, "completionPromise", "must not contain '<' or '>'"],
    [{ maxCostUsd: 0 }, "maxCostUsd", "must be above 0"],
    [{ maxLimitWaitMs: -1 }, "maxLimitWaitMs", "must be between 0 and 7d"],
    [{ inactivityTimeoutMs: 0 }, "inactivityTimeoutMs", "must be above 0"],
    [{ historyCount: -1 }, "historyCount", "must be 0 or more"],
    [{ verify: [" "] }, "verify", "needs a command, e.g. \"pnpm test\""],
    [{ minIterations: 5, maxIterations: 3 }, "minIterations", "(5) must not be above the maximum number of iterations (3)"]
  ])("says what is wrong with %j, the field named by the issue's path alone", (overrides, field, message) => {
    const issue = issueOf({ ...options(), ...overrides })
    expect({ field: issue?.path[0], message: issue?.message }).toEqual({ field, message })
  })
})
