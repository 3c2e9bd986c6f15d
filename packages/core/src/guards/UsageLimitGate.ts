import { Clock, Context, Effect, Layer, Stream, SubscriptionRef } from "effect"
import type { ChangeId } from "../domain/Domain.js"

/** A usage limit a loop met on an agent: the agent may run again at `until` (epoch ms; Infinity: not in this run). */
export interface LimitHold {
  readonly changeId: ChangeId
  readonly until: number
}

/** The agents held by a limit, by agent (`claude`, `codex:gpt-5.5`). */
export type LimitHolds = ReadonlyMap<string, LimitHold>

/** What one loop tells the loops it shares usage limits with, and reads from them. */
export interface LimitGate {
  /** This loop met `agent`'s limit: the agent is held until `until`. A shorter hold than one already known changes nothing. */
  readonly report: (agent: string, until: number) => Effect.Effect<void>
  /** The agents a limit holds now, whichever loop met it. */
  readonly held: Effect.Effect<LimitHolds>
  /** Every hold reported to the gate, as they change. */
  readonly holds: Stream.Stream<LimitHolds>
}

type Holds = SubscriptionRef.SubscriptionRef<LimitHolds>

const gateOf = (holds: Holds, changeId: ChangeId): LimitGate => ({
  report: (agent, until) =>
    SubscriptionRef.update(holds, (known) => {
      const held = known.get(agent)
      return held !== undefined && held.until >= until ? known : new Map(known).set(agent, { changeId, until })
    }),
  held: Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.map(SubscriptionRef.get(holds), (known) => new Map([...known].filter(([, hold]) => hold.until > now)))),
  // A report that leaves the longer hold in place changes nothing to tell.
  holds: Stream.changes(holds.changes)
})

const makeHolds = SubscriptionRef.make<LimitHolds>(new Map())

/**
 * Where loops learn of the usage limits other loops met. A limit is an account's, so it is kept
 * by agent. With one gate per loop (the default) a loop knows only the limits it meets itself;
 * with one gate for every loop of the process, a loop about to run an agent another loop found
 * limited runs another agent, or waits for it.
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

  /** One gate for every loop of the process: they share the agents' accounts, and so their limits. */
  static readonly layerShared = Layer.effect(
    UsageLimitGate,
    Effect.map(makeHolds, (holds) => ({ forLoop: (changeId: ChangeId) => Effect.succeed(gateOf(holds, changeId)) }))
  )
}
