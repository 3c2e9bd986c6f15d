import { Effect, FiberRef, Option } from "effect"
import { currentGracePeriod } from "./HarnessProcess.js"

/**
 * Runs `effect` for at most the grace period a stopping loop has (`currentGracePeriod`: a few
 * seconds, or until a second Ctrl-C): its result, or none once the grace period is over and it has
 * been interrupted. For what a stopping loop still does, such as pushing to a remote that may not
 * answer: even where it runs uninterruptibly, as a finalizer does, it is stopped in time.
 */
export const withinGrace = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.flatMap(FiberRef.get(currentGracePeriod), (grace) =>
    Effect.raceFirst(Effect.interruptible(Effect.map(effect, Option.some)), Effect.interruptible(Effect.as(grace, Option.none<A>()))))
