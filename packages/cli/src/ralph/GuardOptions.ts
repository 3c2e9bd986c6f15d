import { MAX_LIMIT_WAIT_MS } from "@spool/core"
import { Effect, Option } from "effect"
import { parseDuration } from "../Duration.js"
import { example, type ValueSpec } from "../OptionSpec.js"
import { usageError } from "../UsageError.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "./Options.js"

/** Failed iterations in a row that stop the loop when `--max-consecutive-failures` is not given. */
export const DEFAULT_MAX_CONSECUTIVE_FAILURES = 5

/** A count on the command line: digits only, at least `least`, and small enough to be exact. */
export const wholeNumber = (spec: ValueSpec, text: string, least: 0 | 1) => {
  const trimmed = text.trim()
  return /^\d+$/.test(trimmed) && Number(trimmed) >= least && Number.isSafeInteger(Number(trimmed))
    ? Effect.succeed(Number(trimmed))
    : Effect.fail(usageError(
      `--${spec.name} must be a ${least === 0 ? "whole number (0 or more)" : "positive whole number"}, got '${text}'; e.g. ${example(spec)}`,
      spec.name
    ))
}

const dollars = (text: string) => {
  const trimmed = text.trim()
  return /^(\d+(\.\d*)?|\.\d+)$/.test(trimmed) && Number(trimmed) > 0
    ? Effect.succeed(Number(trimmed))
    : Effect.fail(usageError(`--max-cost must be an amount of US dollars above 0, without a '$' (like 5 or 2.50), got '${text}'`, specs.maxCost.name))
}

const optional = <A, E>(value: Option.Option<string>, parse: (text: string) => Effect.Effect<A, E>) =>
  Option.match(value, { onNone: () => Effect.succeed(null), onSome: parse })

/** The guards' settings from the command line; every mistake is a usage error before anything runs. */
export const guardOptions = (args: RalphArgs) =>
  Effect.gen(function*() {
    const maxLimitWaitMs = yield* parseDuration(specs.maxLimitWait.name, args.maxLimitWait, { allowZero: true })
    if (maxLimitWaitMs > MAX_LIMIT_WAIT_MS) {
      return yield* usageError(
        `--max-limit-wait must be at most 7d, got '${args.maxLimitWait}'; a limit that lasts longer ends the loop with exit 5`,
        specs.maxLimitWait.name
      )
    }
    const failures = yield* optional(args.maxConsecutiveFailures, (text) => wholeNumber(specs.maxConsecutiveFailures, text, 0))
    if (args.failFast && failures !== null && failures !== 1) {
      return yield* usageError(`--fail-fast means --max-consecutive-failures 1, not ${failures}; give one of them`, specs.maxConsecutiveFailures.name)
    }
    return {
      maxCostUsd: yield* optional(args.maxCost, dollars),
      maxTokens: yield* optional(args.maxTokens, (text) => wholeNumber(specs.maxTokens, text, 1)),
      maxDurationMs: yield* optional(args.maxDuration, (text) => parseDuration(specs.maxDuration.name, text)),
      stallIterations: yield* wholeNumber(specs.stallIterations, args.stallIterations, 0),
      maxConsecutiveFailures: args.failFast ? 1 : failures ?? DEFAULT_MAX_CONSECUTIVE_FAILURES,
      maxLimitWaitMs
    }
  })
