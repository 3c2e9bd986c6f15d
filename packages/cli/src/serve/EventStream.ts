import { HttpServerResponse } from "@effect/platform"
import { Deferred, Duration, Effect, Stream } from "effect"
import type { SharedViews } from "./SharedViews.js"

/** A comment now and then keeps proxies and browsers from closing a quiet event stream. */
const KEEP_ALIVE = Duration.seconds(15)

/** The end of serving, as the streams tell it: whether spool served alone, and when it stops. */
export interface Ending {
  readonly alone: boolean
  readonly stopping: Deferred.Deferred<void>
}

/** What the event streams share: the end of serving, and one reader of each view. */
export interface Serving<R> {
  readonly ending: Ending
  readonly views: SharedViews<R>
}

/**
 * Server-sent events of a view: its snapshot at once, then each one that differs from the last (from
 * the view's one reader, `SharedViews`), and a keep-alive comment now and then. Once spool stops
 * serving, the snapshot read then (a loop that has just ended wrote its ending last), and an `end`
 * event: the page stops reconnecting.
 */
const events = (snapshots: Stream.Stream<string>, last: Effect.Effect<string>, ending: Ending) =>
  Stream.merge(
    snapshots.pipe(
      Stream.interruptWhen(Deferred.await(ending.stopping)),
      Stream.concat(Stream.fromEffect(last)),
      Stream.changes,
      Stream.map((json) => `data: ${json}\n\n`)
    ),
    Stream.tick(KEEP_ALIVE).pipe(Stream.drop(1), Stream.as(": keep-alive\n\n")),
    { haltStrategy: "left" }
  ).pipe(Stream.concat(Stream.succeed(`event: end\ndata: ${ending.alone ? "dashboard stopped" : "run ended"}\n\n`)))

/**
 * The answer of an event stream: the view named `view`, read by `read`. Nothing is read until the
 * body is sent (a HEAD gets the headers alone), and the view is watched for as long as the body is:
 * a client that goes away ends the request, and its watch with it.
 */
export const eventStream = <R>(view: string, read: Effect.Effect<unknown, never, R>, serving: Serving<R>) =>
  Effect.map(Effect.context<R>(), (context) => {
    const last = Effect.provide(Effect.map(read, (snapshot) => JSON.stringify(snapshot)), context)
    const body = Stream.unwrap(Effect.map(serving.views.watch(view, read), (snapshots) => events(snapshots, last, serving.ending)))
    return HttpServerResponse.stream(Stream.encodeText(Stream.concat(Stream.succeed("retry: 2000\n\n"), body)), {
      contentType: "text/event-stream; charset=utf-8",
      headers: { Connection: "keep-alive", "X-Accel-Buffering": "no" }
    })
  })
