import { Effect, Option, Schedule } from "effect"
import type { LoopState } from "../domain/Domain.js"
import { clock, type HeldLimit, type LimitPlan, type LimitWaitSettings, limitWaits, type UsageLimit } from "../guards/LimitWait.js"
import type { LimitGate } from "../guards/UsageLimitGate.js"
import type { LoopReporter } from "../output/LoopReporter.js"
import type { StateError } from "../state/StateError.js"

/** What a loop waits for limits with: where it says so, and the gate it shares them through. */
export interface LimitWaiting {
  readonly settings: LimitWaitSettings
  readonly gate: LimitGate
  readonly reporter: LoopReporter["Type"]
  readonly saveState: (patch: Partial<LoopState>) => Effect.Effect<void, StateError>
}

/**
 * The usage-limit waits of one iteration, by the one limit policy: `waitFor` sleeps out a limit
 * met (by the agent, or by another loop), saying so and marking the state waiting, and answers
 * the plan made; a `GiveUp` plan is not slept.
 */
export const iterationWaits = ({ gate, reporter, saveState, settings }: LimitWaiting) => {
  const announce = (plan: LimitPlan) =>
    plan._tag === "GiveUp" ? Effect.void : Effect.zipRight(
      // Loops sharing the gate wait for a limit this loop met, rather than run into it too.
      plan.basis === "another loop's limit" ? Effect.void : gate.report(plan.resumeAt),
      Effect.zipRight(
        reporter.line(`waiting for the usage limit until ${clock(plan.resumeAt)} (${plan.basis}); Ctrl-C stops the loop`),
        // The wait goes on even when the state file cannot say so.
        saveState({ status: "waiting", resumeAt: new Date(plan.resumeAt).toISOString() }).pipe(
          Effect.catchAll((error) => reporter.warn(error.message))
        )
      )
    )
  return Effect.map(Schedule.driver(limitWaits(settings).pipe(Schedule.tapOutput(announce))), (waits) => ({
    waitFor: (limit: UsageLimit | HeldLimit): Effect.Effect<LimitPlan> =>
      Effect.flatMap(Effect.option(waits.next(limit)), (waited) => Option.isSome(waited) ? Effect.succeed(waited.value) : Effect.orDie(waits.last))
  }))
}
