import { type Context, type Duration, Effect, ExecutionStrategy, Schedule, Scope, Stream } from "effect"

/**
 * One reader of each view for every client watching it: while anyone watches, the view is read
 * every `poll`, and each snapshot that differs from the last goes to every client as JSON; a
 * client that comes later gets the latest at once. With no client left, the view is not read.
 */
export interface SharedViews<R> {
  /** The view named `key`, read by `read`: its snapshots as JSON, the latest first. */
  readonly watch: (key: string, read: Effect.Effect<unknown, never, R>) => Effect.Effect<Stream.Stream<string>>
}

/**
 * Views shared for the scope's lifetime; they stop with a scope of their own, forked here, so a
 * finalizer added to the scope after them (the streams' last words) runs while they still serve.
 */
export const makeSharedViews = <R>(poll: Duration.DurationInput): Effect.Effect<SharedViews<R>, never, R | Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const context: Context.Context<R> = yield* Effect.context<R>()
    const creating = yield* Effect.makeSemaphore(1)
    const shared = new Map<string, Stream.Stream<string>>()
    const watch = (key: string, read: Effect.Effect<unknown, never, R>) =>
      creating.withPermits(1)(Effect.suspend(() => {
        const known = shared.get(key)
        if (known !== undefined) return Effect.succeed(known)
        return Stream.repeatEffectWithSchedule(read, Schedule.spaced(poll)).pipe(
          Stream.map((snapshot) => JSON.stringify(snapshot)),
          Stream.changes,
          Stream.provideContext(context),
          // A slow client skips to the latest snapshot instead of holding the others back.
          Stream.share({ capacity: 1, strategy: "sliding", replay: 1 }),
          Scope.extend(scope),
          Effect.tap((stream) => Effect.sync(() => shared.set(key, stream)))
        )
      }))
    return { watch }
  })
