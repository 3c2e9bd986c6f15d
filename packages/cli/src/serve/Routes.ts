import { createHash, timingSafeEqual } from "node:crypto"

/**
 * The dashboard's paths: the page, its two assets, the loops as JSON and as events, and one
 * change's page as JSON and as events (`:changeId`, one path segment). Nothing else is served.
 */
export const paths = {
  page: "/",
  script: "/app.js",
  style: "/app.css",
  loops: "/api/loops",
  loopsEvents: "/events",
  loop: "/api/loops/:changeId",
  loopEvents: "/events/:changeId"
} as const

/**
 * How the router reads a request's path: as sent, letter case and slashes included, so that
 * `/API/loops` and `//app.js` name nothing and `/api/loops/` is not `/api/loops`. A change id is a
 * directory's name: at most 255 bytes.
 */
export const pathRules = {
  caseSensitive: true,
  ignoreTrailingSlash: false,
  ignoreDuplicateSlashes: false,
  maxParamLength: 255
} as const

/**
 * Whether a request target is a path the router reads as sent: it takes `;` and `#` for the end of
 * a path, and a whole URL or `*` for `/`. None of the dashboard's paths is written so: such a
 * target names nothing.
 */
export const isPlainPath = (url: string) => {
  const query = url.indexOf("?")
  const path = query === -1 ? url : url.slice(0, query)
  return path.startsWith("/") && !/[;#]/.test(path)
}

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

/** A request the dashboard will not answer: its status, and the line that says why. */
export interface Refusal {
  readonly status: 401 | 405 | 421
  readonly reason: string
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
 * The dashboard's rules before any path, in order: the Host a loopback dashboard answers to (a
 * page elsewhere cannot reach it through a name of its own), the token, the methods (it only
 * reads). null: the request goes on to the paths.
 */
export const refusalOf = (request: RequestLine, access: Access): Refusal | null => {
  if (access.hosts !== null && (request.host === undefined || !access.hosts.has(request.host.toLowerCase()))) {
    return { status: 421, reason: "this dashboard answers to its own address only" }
  }
  if (access.token !== null) {
    const token = tokenOf(request)
    if (token === null || !sameSecret(token, access.token)) return { status: 401, reason: "a token is needed: add ?token=<the --serve-token> to the URL" }
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    return { status: 405, reason: "the dashboard only reads: GET or HEAD" }
  }
  return null
}
