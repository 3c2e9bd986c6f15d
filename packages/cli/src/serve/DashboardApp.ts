import { FileSystem, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse, Path } from "@effect/platform"
import { HistoryStore, loadDashboardDetail, loadDashboardLoops, Workspace } from "@spool/core"
import { Effect, Option } from "effect"
import { logView } from "@spool/app"
import { eventStream, type Serving } from "./EventStream.js"
import { pageCss, pageHtml } from "./Page.js"
import { pageScript } from "./PageScript.js"
import { type Access, isPlainPath, pathRules, paths, type Refusal, refusalOf } from "./Routes.js"

/** What the dashboard's reads need: the repository's loop state, through the file system. */
export type ReadNeeds = Workspace | HistoryStore | FileSystem.FileSystem | Path.Path

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
  text: "text/plain; charset=utf-8"
}

const answer = (status: number, contentType: string, body: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(body, { status, contentType, headers })

const json = (value: unknown) => answer(200, TYPES.json, JSON.stringify(value))

const notFound = (what: string) => answer(404, TYPES.text, `${what}\n`)

const refused = ({ reason, status }: Refusal) =>
  answer(status, TYPES.text, `${reason}\n`, status === 405 ? { Allow: "GET, HEAD" } : status === 401 ? { "WWW-Authenticate": "Bearer" } : {})

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

/** The change a path names; `/api/loops/` and `/events/` name none, and are no paths of the dashboard. */
const changeId = Effect.flatMap(HttpRouter.params, (params) =>
  params.changeId === undefined || params.changeId === ""
    ? Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => new HttpServerError.RouteNotFound({ request }))
    : Effect.succeed(params.changeId))

/** The routes: the page and its assets, as built once; the loops and a change's page read for each request. */
const router = (read: Effect.Effect.Success<ReturnType<typeof reader>>, serving: Serving<ReadNeeds>, access: Access) => {
  const page = answer(200, TYPES.html, pageHtml(access.token))
  const script = answer(200, TYPES.js, pageScript)
  const style = answer(200, TYPES.css, pageCss)
  const noLoop = notFound("not found: no loop state for that change")
  return HttpRouter.empty.pipe(
    HttpRouter.get(paths.page, Effect.succeed(page)),
    HttpRouter.get(paths.script, Effect.succeed(script)),
    HttpRouter.get(paths.style, Effect.succeed(style)),
    HttpRouter.get(paths.loops, Effect.map(read.loops, json)),
    HttpRouter.get(paths.loopsEvents, eventStream("loops", read.loops, serving)),
    HttpRouter.get(
      paths.loop,
      Effect.flatMap(changeId, (id) => Effect.map(read.loop(id), Option.match({ onNone: () => noLoop, onSome: json })))
    ),
    HttpRouter.get(
      paths.loopEvents,
      Effect.flatMap(changeId, (id) =>
        Effect.flatMap(read.loop(id), (detail) =>
          Option.isNone(detail)
            ? Effect.succeed(noLoop)
            // A change whose state goes away while it is watched: its page says so (null).
            : eventStream(`loop ${id}`, Effect.map(read.loop(id), Option.getOrNull), serving)))
    )
  )
}

/**
 * The dashboard as an HTTP app: a request refused as `Routes` says, else routed, any other path a
 * 404; a failure of its own is a 500, never a crash; every answer with the security headers. It
 * only reads: from the repository's loop state, its views through `serving`.
 */
export const dashboardApp = (redact: (text: string) => string, serving: Serving<ReadNeeds>, access: Access) =>
  Effect.gen(function*() {
    const routes = yield* HttpRouter.toHttpApp(router(yield* reader(redact), serving, access)).pipe(HttpRouter.withRouterConfig(pathRules))
    const notFoundAtAll = notFound("not found")
    const failed = answer(500, TYPES.text, "the dashboard failed to read the loops\n")
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const refusal = refusalOf({ method: request.method, url: request.url, host: request.headers.host, authorization: request.headers.authorization }, access)
      if (refusal !== null) return Effect.succeed(refused(refusal))
      return isPlainPath(request.url) ? routes : Effect.succeed(notFoundAtAll)
    }).pipe(
      Effect.catchTag("RouteNotFound", () => Effect.succeed(notFoundAtAll)),
      Effect.catchAllDefect(() => Effect.succeed(failed)),
      Effect.map(HttpServerResponse.setHeaders(SECURITY_HEADERS))
    )
  })
