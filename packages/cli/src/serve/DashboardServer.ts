import { FileSystem, Path } from "@effect/platform"
import { HistoryStore, loadDashboardDetail, loadDashboardLoops, Workspace } from "@spool/core"
import { Deferred, Duration, Effect, FiberSet, Option, Schema, Stream } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { logView } from "@spool/app"
import type { DashboardPlan } from "./DashboardOptions.js"
import { pageCss, pageHtml } from "./Page.js"
import { pageScript } from "./PageScript.js"
import { type Access, decide, type Route } from "./Routes.js"
import { makeSharedViews, type SharedViews } from "./SharedViews.js"

/** The dashboard cannot listen: the port is taken, the address is not this machine's, ... */
export class DashboardError extends Schema.TaggedError<DashboardError>()("DashboardError", {
  message: Schema.String
}) {}

/** How often the loop state is read for the events: a person sees a change within a second. */
const POLL = Duration.millis(600)
/** A comment now and then keeps proxies and browsers from closing a quiet event stream. */
const KEEP_ALIVE = Duration.seconds(15)
/** How long spool waits, as it stops serving, for the event streams' last state to reach slow clients. */
const LAST_WORDS = Duration.seconds(5)

const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin"
}

const TYPES = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json; charset=utf-8",
  text: "text/plain; charset=utf-8",
  events: "text/event-stream; charset=utf-8"
}

const send = (response: ServerResponse, head: boolean, status: number, type: string, body: string, extra: Record<string, string> = {}) =>
  Effect.sync(() => {
    response.writeHead(status, { ...SECURITY_HEADERS, ...extra, "Content-Type": type, "Content-Length": String(Buffer.byteLength(body)) })
    response.end(head ? undefined : body)
  })

/**
 * Writes `chunk`, waiting for the client to take what was written before when it is slow. Its
 * listeners go once the wait ends, however it ends: drained, closed, or the request interrupted.
 */
export const write = (response: ServerResponse, chunk: string) =>
  Effect.async<void>((resume) => {
    if (response.write(chunk)) return resume(Effect.void)
    const unlisten = () => {
      response.off("drain", drained)
      response.off("close", drained)
    }
    const drained = () => {
      unlisten()
      resume(Effect.void)
    }
    response.once("drain", drained)
    response.once("close", drained)
    return Effect.sync(unlisten)
  })

/** What a route reads: the repository's loops, or one change's page (none: not a change with loop state). */
const reader = (redact: (text: string) => string) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const repository = (yield* Path.Path).basename(workspace.root)
    return {
      loops: Effect.map(loadDashboardLoops, (loops) => ({ repository, loops })),
      loop: (changeId: string) => loadDashboardDetail(changeId, redact, logView(workspace.root))
    }
  })

type Reader = Effect.Effect.Success<ReturnType<typeof reader>>
type ReadNeeds = Workspace | HistoryStore | FileSystem.FileSystem | Path.Path

/** The end of serving, as the streams tell it: whether spool served alone, and when it stops. */
interface Ending {
  readonly alone: boolean
  readonly stopping: Deferred.Deferred<void>
}

/**
 * Server-sent events of a view: its snapshot at once, then each one that differs from the last (from
 * the view's one reader, `SharedViews`), and a keep-alive comment now and then. Once spool stops
 * serving, the snapshot read then (a loop that has just ended wrote its ending last), and an `end`
 * event: the page stops reconnecting.
 */
const events = (snapshots: Stream.Stream<string>, last: Effect.Effect<string, never, ReadNeeds>, ending: Ending) =>
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

/** What the event streams share: the end of serving, and one reader of each view. */
interface Serving {
  readonly ending: Ending
  readonly views: SharedViews<ReadNeeds>
}

const serveEvents = (response: ServerResponse, head: boolean, view: string, read: Effect.Effect<unknown, never, ReadNeeds>, serving: Serving) =>
  Effect.gen(function*() {
    response.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": TYPES.events, Connection: "keep-alive", "X-Accel-Buffering": "no" })
    if (head) {
      response.end()
      return
    }
    yield* write(response, "retry: 2000\n\n")
    const snapshots = yield* serving.views.watch(view, read)
    const last = Effect.map(read, (snapshot) => JSON.stringify(snapshot))
    yield* Stream.runForEach(events(snapshots, last, serving.ending), (chunk) => write(response, chunk))
    response.end()
  })

const json = (response: ServerResponse, head: boolean, value: unknown) => send(response, head, 200, TYPES.json, JSON.stringify(value))

const serveRoute = (read: Reader, serving: Serving, access: Access, route: Route, head: boolean, response: ServerResponse) =>
  Effect.gen(function*() {
    switch (route._tag) {
      case "Page":
        return yield* send(response, head, 200, TYPES.html, pageHtml(access.token))
      case "Script":
        return yield* send(response, head, 200, TYPES.js, pageScript)
      case "Style":
        return yield* send(response, head, 200, TYPES.css, pageCss)
      case "Loops":
        return yield* json(response, head, yield* read.loops)
      case "LoopsEvents":
        return yield* serveEvents(response, head, "loops", read.loops, serving)
      case "Loop":
      case "LoopEvents": {
        const detail = yield* read.loop(route.changeId)
        if (Option.isNone(detail)) return yield* send(response, head, 404, TYPES.text, "not found: no loop state for that change\n")
        if (route._tag === "Loop") return yield* json(response, head, detail.value)
        // A change whose state goes away while it is watched: its page says so (null).
        return yield* serveEvents(response, head, `loop ${route.changeId}`, Effect.map(read.loop(route.changeId), Option.getOrNull), serving)
      }
    }
  })

/** Answers one request: refused as the rules say, or served; a failure of its own is a 500, never a crash. */
const handle = (read: Reader, serving: Serving, access: Access) => (request: IncomingMessage, response: ServerResponse) => {
  const decision = decide({
    method: request.method ?? "GET",
    url: request.url ?? "/",
    host: request.headers.host,
    authorization: request.headers.authorization
  }, access)
  const head = request.method === "HEAD"
  if (decision._tag === "Refuse") {
    const extra: Record<string, string> = decision.status === 405
      ? { Allow: "GET, HEAD" }
      : decision.status === 401
      ? { "WWW-Authenticate": "Bearer" }
      : {}
    return send(response, head, decision.status, TYPES.text, `${decision.reason}\n`, extra)
  }
  return serveRoute(read, serving, access, decision.route, decision.head, response).pipe(
    Effect.catchAllDefect(() => response.headersSent ? Effect.sync(() => response.destroy()) : send(response, head, 500, TYPES.text, "the dashboard failed to read the loops\n"))
  )
}

const hostInUrl = (host: string) => (host.includes(":") ? `[${host}]` : host)

/** Why listening failed, in words a person can act on. */
const listenError = (plan: DashboardPlan, error: NodeJS.ErrnoException) => {
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

/**
 * Serves the dashboard as `plan` says while the scope lasts: read-only, from the repository's loop
 * state alone. Closing the scope ends every open event stream, each with the loops' last state,
 * and closes the server. Succeeds with the URL once it listens.
 */
export const serveDashboard = (plan: DashboardPlan, redact: (text: string) => string) =>
  Effect.gen(function*() {
    const read = yield* reader(redact)
    const server = createServer()
    const port = yield* Effect.acquireRelease(
      Effect.async<number, DashboardError>((resume) => {
        const failed = (error: NodeJS.ErrnoException) => resume(Effect.fail(new DashboardError({ message: listenError(plan, error) })))
        server.once("error", failed)
        server.listen({ host: plan.host, port: plan.port }, () => {
          server.off("error", failed)
          // Once listening, a failure of the server is not spool's end: the loops go on without their page.
          server.on("error", () => {})
          resume(Effect.succeed((server.address() as AddressInfo).port))
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    // Requests run in fibers of this scope: when it closes, open event streams end with it.
    const requests = yield* FiberSet.make()
    const run = yield* FiberSet.runtime(requests)<ReadNeeds>()
    // Made before the finalizer below, so closed after it: the views still serve the last words.
    const views = yield* makeSharedViews<ReadNeeds>(POLL)
    const ending: Ending = { alone: plan.alone, stopping: yield* Deferred.make<void>() }
    // Added after the set, so run before it interrupts the requests: the streams send their last words, for a while at most.
    yield* Effect.addFinalizer(() =>
      Deferred.succeed(ending.stopping, undefined).pipe(
        Effect.zipRight(Effect.interruptible(FiberSet.awaitEmpty(requests)).pipe(Effect.timeout(LAST_WORDS), Effect.ignore))
      )
    )
    const access: Access = {
      token: plan.token,
      hosts: plan.loopback ? new Set(["127.0.0.1", "localhost", "[::1]", hostInUrl(plan.host)].map((name) => `${name.toLowerCase()}:${port}`)) : null
    }
    const respond = handle(read, { ending, views }, access)
    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      const fiber = run(respond(request, response))
      response.on("close", () => fiber.unsafeInterruptAsFork(fiber.id()))
    })
    return { url: `http://${hostInUrl(plan.host)}:${port}/`, port }
  })
