import { Effect, Option, Ref, Schedule } from "effect"
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
  /** The loop has other agents: a wait is for every one of them, and the line names the first free. */
  readonly several: boolean
}

/**
 * The usage-limit waits of one iteration, by the one limit policy: `waitFor` sleeps out a limit
 * met on `agent` (by the agent, or before, by another loop), saying so and marking the state
 * waiting, and answers the plan made; a `GiveUp` plan is not slept.
 */
export const iterationWaits = ({ gate, reporter, saveState, settings, several }: LimitWaiting) =>
  Effect.gen(function*() {
    const waitingFor = yield* Ref.make("")
    const announce = (plan: LimitPlan) =>
      plan._tag === "GiveUp" ? Effect.void : Effect.gen(function*() {
        const agent = yield* Ref.get(waitingFor)
        // Loops sharing the gate wait for a limit this loop met, rather than run into it too.
        if (plan.basis !== "another loop's limit") yield* gate.report(agent, plan.resumeAt)
        const what = several ? `every agent's usage limit until ${clock(plan.resumeAt)}, when ${agent} is free (${plan.basis})` : `the usage limit until ${clock(plan.resumeAt)} (${plan.basis})`
        yield* reporter.line(`waiting for ${what}; Ctrl-C stops the loop`)
        // The wait goes on even when the state file cannot say so.
        yield* saveState({ status: "waiting", resumeAt: new Date(plan.resumeAt).toISOString() }).pipe(
          Effect.catchAll((error) => reporter.warn(error.message))
        )
      })
    const waits = yield* Schedule.driver(limitWaits(settings).pipe(Schedule.tapOutput(announce)))
    return {
      waitFor: (limit: UsageLimit | HeldLimit, agent: string): Effect.Effect<LimitPlan> =>
        Effect.zipRight(
          Ref.set(waitingFor, agent),
          Effect.flatMap(Effect.option(waits.next(limit)), (waited) => Option.isSome(waited) ? Effect.succeed(waited.value) : Effect.orDie(waits.last))
        )
    }
  })
