import { Context, Data, Effect, Layer, PubSub, type Queue, type Scope, type Stream, SubscriptionRef } from "effect"
import type { ChangeId, IterationRecord, LoopState } from "../domain/Domain.js"

/**
 * What a loop tells the rest of the process as it runs:
 * - `StateChanged`: its state as it was just set (the state file is written from it)
 * - `IterationRecorded`: an iteration's record, once it is in the history
 * - `AgentSwitched`: iteration `iteration` runs `to` rather than `from`: `held` is passed over, a
 *   usage limit holding it `until` (ISO; null: for the rest of the run) (`limited`), or `held`'s
 *   limit has lifted (`lifted`)
 */
export type LoopEvent = Data.TaggedEnum<{
  StateChanged: { readonly changeId: ChangeId; readonly state: LoopState }
  IterationRecorded: { readonly changeId: ChangeId; readonly record: IterationRecord }
  AgentSwitched: {
    readonly changeId: ChangeId
    readonly run: string
    readonly iteration: number
    readonly from: string
    readonly to: string
    readonly why: "limited" | "lifted"
    readonly held: string
    readonly until: string | null
  }
}>
export const LoopEvent = Data.taggedEnum<LoopEvent>()

/**
 * The one source of what the loops of this process do, for a sweep's summary, a dashboard and
 * notifications: every loop's events, and the latest state of each loop.
 */
// Stryker disable next-line StringLiteral: the key only tells services apart in a context, and no other service has an empty one
export class LoopEvents extends Context.Tag("@spool/core/LoopEvents")<LoopEvents, {
  readonly publish: (event: LoopEvent) => Effect.Effect<void>
  /** Every event published from now on, while the scope lasts; a subscriber keeps what it has not read yet. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<LoopEvent>, never, Scope.Scope>
  /** The latest state of every loop this process has run, by change. */
  readonly loops: Effect.Effect<ReadonlyMap<ChangeId, LoopState>>
  /** The same, now and at each change. */
  readonly loopChanges: Stream.Stream<ReadonlyMap<ChangeId, LoopState>>
}>() {
  /** Events go to whoever subscribes; with no subscriber, a publish only updates the map of states. */
  static readonly layer = Layer.effect(
    LoopEvents,
    Effect.gen(function*() {
      const hub = yield* PubSub.unbounded<LoopEvent>()
      const loops = yield* SubscriptionRef.make<ReadonlyMap<ChangeId, LoopState>>(new Map())
      return {
        publish: (event) =>
          Effect.zipRight(
            event._tag === "StateChanged"
              ? SubscriptionRef.update(loops, (states) => new Map(states).set(event.changeId, event.state))
              : Effect.void,
            Effect.asVoid(PubSub.publish(hub, event))
          ),
        subscribe: PubSub.subscribe(hub),
        loops: SubscriptionRef.get(loops),
        loopChanges: loops.changes
      }
    })
  )
}
