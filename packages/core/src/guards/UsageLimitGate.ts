import { Clock, Context, Effect, Layer, Option, Stream, SubscriptionRef } from "effect"
import type { ChangeId } from "../domain/Domain.js"

/** A usage limit a loop met and waits out: it runs again at `until` (epoch ms). */
export interface LimitHold {
  readonly changeId: ChangeId
  readonly until: number
}

/** What one loop tells the loops it shares a usage limit with, and reads from them. */
export interface LimitGate {
  /** This loop met a limit and waits until `until`. */
  readonly report: (until: number) => Effect.Effect<void>
  /** The limit another loop met that still lasts, if any: this loop waits for it rather than run into it. */
  readonly heldByOthers: Effect.Effect<Option.Option<LimitHold>>
  /** The latest limit reported to the gate, as it changes. */
  readonly holds: Stream.Stream<Option.Option<LimitHold>>
}

/** The latest of the limits the loops of one gate met. */
type Holds = SubscriptionRef.SubscriptionRef<Option.Option<LimitHold>>

const gateOf = (holds: Holds, changeId: ChangeId): LimitGate => ({
  report: (until) =>
    SubscriptionRef.update(holds, (held) =>
      Option.isSome(held) && held.value.until >= until ? held : Option.some({ changeId, until })),
  heldByOthers: Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.map(SubscriptionRef.get(holds), Option.filter((held) => held.changeId !== changeId && held.until > now))),
  // A report that leaves the longer limit in place changes nothing to tell.
  holds: Stream.changes(holds.changes)
})

const makeHolds = SubscriptionRef.make<Option.Option<LimitHold>>(Option.none())

/**
 * Where loops learn of the usage limits other loops met. With one gate per loop (the default) a
 * loop waits out only the limits it meets itself; with one gate for every loop of the process,
 * a loop about to run its agent waits for a limit another loop met first.
 */
// Stryker disable next-line StringLiteral: the key only tells services apart in a context, and no other service has an empty one
export class UsageLimitGate extends Context.Tag("@spool/core/UsageLimitGate")<UsageLimitGate, {
  /** The gate the loop on `changeId` reports to and reads. */
  readonly forLoop: (changeId: ChangeId) => Effect.Effect<LimitGate>
}>() {
  /** Each loop on its own: what one meets, no other waits for. */
  static readonly layerPerLoop = Layer.succeed(UsageLimitGate, {
    forLoop: (changeId) => Effect.map(makeHolds, (holds) => gateOf(holds, changeId))
  })

  /** One gate for every loop of the process: they share one account's limits. */
  static readonly layerShared = Layer.effect(
    UsageLimitGate,
    Effect.map(makeHolds, (holds) => ({ forLoop: (changeId: ChangeId) => Effect.succeed(gateOf(holds, changeId)) }))
  )
}
