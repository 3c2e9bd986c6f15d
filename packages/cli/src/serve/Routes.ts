import { createHash, timingSafeEqual } from "node:crypto"

/** What the dashboard serves: a page, its two assets, the loops as JSON and as events. */
export type Route =
  | { readonly _tag: "Page" }
  | { readonly _tag: "Script" }
  | { readonly _tag: "Style" }
  | { readonly _tag: "Loops" }
  | { readonly _tag: "Loop"; readonly changeId: string }
  | { readonly _tag: "LoopsEvents" }
  | { readonly _tag: "LoopEvents"; readonly changeId: string }

/** What to do with a request: serve one of the routes (`head`: the headers only), or refuse it. */
export type Decision =
  | { readonly _tag: "Serve"; readonly route: Route; readonly head: boolean }
  | { readonly _tag: "Refuse"; readonly status: 401 | 404 | 405 | 421; readonly reason: string }

/** Who may ask: the token every request must carry (if any), and the Host headers a request may name (null: any). */
export interface Access {
  readonly token: string | null
  readonly hosts: ReadonlySet<string> | null
}

export interface RequestLine {
  readonly method: string
  /** The request target as sent, never normalised: `/api/loops/../x` stays what it is. */
  readonly url: string
  readonly host: string | undefined
  readonly authorization: string | undefined
}

const fixed: Record<string, Route> = {
  "/": { _tag: "Page" },
  "/app.js": { _tag: "Script" },
  "/app.css": { _tag: "Style" },
  "/api/loops": { _tag: "Loops" },
  "/events": { _tag: "LoopsEvents" }
}

/** A path segment decoded, or null when it cannot be (a bad escape). */
const segment = (raw: string) => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return null
  }
}

/** The route of a path, or null: only the paths above, and one segment after `/api/loops/` or `/events/`. */
export const routeOf = (path: string): Route | null => {
  const known = fixed[path]
  if (known !== undefined) return known
  const match = /^\/(api\/loops|events)\/([^/]+)$/.exec(path)
  const changeId = match === null ? null : segment(match[2]!)
  if (match === null || changeId === null) return null
  return match[1] === "events" ? { _tag: "LoopEvents", changeId } : { _tag: "Loop", changeId }
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()

/** Whether two secrets are equal, in a time that does not depend on where they differ. */
export const sameSecret = (given: string, expected: string) => timingSafeEqual(digest(given), digest(expected))

/** The token a request carries: `?token=` in its URL, or `Authorization: Bearer <token>`. */
export const tokenOf = (request: RequestLine): string | null => {
  const query = request.url.indexOf("?")
  const fromQuery = query === -1 ? null : new URLSearchParams(request.url.slice(query + 1)).get("token")
  if (fromQuery !== null) return fromQuery
  const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(request.authorization ?? "")
  return bearer === null ? null : bearer[1]!
}

/**
 * The dashboard's rules, in order: the Host a loopback dashboard answers to (a page elsewhere
 * cannot reach it through a name of its own), the token, the methods (it only reads), the paths.
 */
export const decide = (request: RequestLine, access: Access): Decision => {
  if (access.hosts !== null && (request.host === undefined || !access.hosts.has(request.host.toLowerCase()))) {
    return { _tag: "Refuse", status: 421, reason: "this dashboard answers to its own address only" }
  }
  if (access.token !== null) {
    const token = tokenOf(request)
    if (token === null || !sameSecret(token, access.token)) return { _tag: "Refuse", status: 401, reason: "a token is needed: add ?token=<the --serve-token> to the URL" }
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    return { _tag: "Refuse", status: 405, reason: "the dashboard only reads: GET or HEAD" }
  }
  const query = request.url.indexOf("?")
  const route = routeOf(query === -1 ? request.url : request.url.slice(0, query))
  return route === null ? { _tag: "Refuse", status: 404, reason: "not found" } : { _tag: "Serve", route, head: request.method === "HEAD" }
}
