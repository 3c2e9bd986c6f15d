import { type HttpApp, HttpServerError } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Deferred, Duration, Effect, FiberSet, Schema } from "effect"
import { createServer } from "node:http"
import { dashboardApp, type ReadNeeds } from "./DashboardApp.js"
import type { DashboardPlan } from "./DashboardOptions.js"
import type { Ending } from "./EventStream.js"
import type { Access } from "./Routes.js"
import { makeSharedViews } from "./SharedViews.js"

/** The dashboard cannot listen: the port is taken, the address is not this machine's, ... */
export class DashboardError extends Schema.TaggedError<DashboardError>()("DashboardError", {
  message: Schema.String
}) {}

/** How often the loop state is read for the events: a person sees a change within a second. */
const POLL = Duration.millis(600)
/** How long spool waits, as it stops serving, for the event streams' last state to reach slow clients. */
const LAST_WORDS = Duration.seconds(5)

const hostInUrl = (host: string) => (host.includes(":") ? `[${host}]` : host)

/** Why listening failed, in words a person can act on. */
const listenError = (plan: DashboardPlan, { cause }: HttpServerError.ServeError) => {
  const error = (cause instanceof Error ? cause : new Error(String(cause))) as NodeJS.ErrnoException
  const where = `${hostInUrl(plan.host)}:${plan.port}`
  switch (error.code) {
    case "EADDRINUSE":
      return `the dashboard cannot listen on ${where}: the port is in use; give another --port, or leave it out for a free one`
    case "EACCES":
      return `the dashboard may not listen on ${where}: permission denied; give a --port above 1023`
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the dashboard cannot listen on ${plan.host}: not an address of this machine; check --serve-host`
    default:
      return `the dashboard cannot listen on ${where}: ${error.message}`
  }
}

/** `app`, each request's fiber in `requests` until it has answered: its body sent, or the request ended. */
const tracked = <E, R>(requests: FiberSet.FiberSet, app: HttpApp.Default<E, R>) =>
  Effect.zipRight(Effect.withFiberRuntime((fiber) => FiberSet.add(requests, fiber)), app)

/**
 * Serves the dashboard as `plan` says while the scope lasts: read-only, from the repository's loop
 * state alone. Closing the scope ends every open event stream, each with the loops' last state,
 * and closes the server. Succeeds with the URL once it listens.
 */
export const serveDashboard = (plan: DashboardPlan, redact: (text: string) => string) =>
  Effect.gen(function*() {
    const node = createServer()
    const server = yield* NodeHttpServer.make(() => node, { host: plan.host, port: plan.port }).pipe(
      Effect.mapError((error) => new DashboardError({ message: listenError(plan, error) }))
    )
    // Once listening, a failure of the server is not spool's end: the loops go on without their page.
    node.on("error", () => {})
    // Closed last: a client still connected then is cut off, so closing the server waits for no one.
    yield* Effect.addFinalizer(() => Effect.sync(() => node.closeAllConnections()))
    const port = server.address._tag === "TcpAddress" ? server.address.port : plan.port
    // Made before the finalizer below, so closed after it: the views still serve the last words.
    const views = yield* makeSharedViews<ReadNeeds>(POLL)
    // Closed before the views: a request still open once the last words are out is interrupted.
    const requests = yield* FiberSet.make()
    const ending: Ending = { alone: plan.alone, stopping: yield* Deferred.make<void>() }
    const access: Access = {
      token: plan.token,
      hosts: plan.loopback ? new Set(["127.0.0.1", "localhost", "[::1]", hostInUrl(plan.host)].map((name) => `${name.toLowerCase()}:${port}`)) : null
    }
    yield* server.serve(tracked(requests, yield* dashboardApp(redact, { ending, views }, access)))
    // Added last, so run first: the streams send their last words, for a while at most.
    yield* Effect.addFinalizer(() =>
      Deferred.succeed(ending.stopping, undefined).pipe(
        Effect.zipRight(Effect.interruptible(FiberSet.awaitEmpty(requests)).pipe(Effect.timeout(LAST_WORDS), Effect.ignore))
      )
    )
    return { url: `http://${hostInUrl(plan.host)}:${port}/`, port }
  })
