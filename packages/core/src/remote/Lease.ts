import { Schema } from "effect"

/**
 * A change's lease on a remote: who works on the change, and until when. Whoever finds it
 * expired may take it over; the holder renews it while its loop runs and gives it up at the end.
 */
export const Lease = Schema.Struct({
  /** This loop's own name (host, pid and a random tag): two loops never share one. */
  holder: Schema.String,
  host: Schema.String,
  pid: Schema.Int,
  /** When the holder took it, and when it last renewed it (ISO). */
  takenAt: Schema.String,
  renewedAt: Schema.String,
  /** When it lapses unless renewed (ISO). */
  expiresAt: Schema.String
})
export type Lease = typeof Lease.Type

/** The lease as the remote has it: none, or a version (its ref's object) and what it says (null when unreadable). */
export type LeaseView =
  | { readonly _tag: "Free" }
  | { readonly _tag: "Held"; readonly version: string; readonly lease: Lease | null }

/**
 * What a loop that wants the change does:
 * - `Take` it, by a swap that holds only while the remote still has `expected` (null: no lease),
 *   taking `over` the expired lease of a loop that stopped renewing it, if any
 * - or find it `Busy`: a live holder has it
 */
export type TakeDecision =
  | { readonly _tag: "Take"; readonly expected: string | null; readonly over: Lease | null }
  | { readonly _tag: "Busy"; readonly lease: Lease }

/** Whether `lease` has lapsed at `now`: its holder stopped renewing it. */
export const isExpired = (lease: Lease, now: number) => {
  const expires = Date.parse(lease.expiresAt)
  return Number.isNaN(expires) || expires <= now
}

/** The decision on the lease `view` at `now`. A lease nobody can read names no live holder. */
export const decideTake = (view: LeaseView, now: number): TakeDecision => {
  if (view._tag === "Free") return { _tag: "Take", expected: null, over: null }
  if (view.lease === null) return { _tag: "Take", expected: view.version, over: null }
  if (isExpired(view.lease, now)) return { _tag: "Take", expected: view.version, over: view.lease }
  return { _tag: "Busy", lease: view.lease }
}

/** Who a loop is, as its lease names it. */
export interface LeaseIdentity {
  readonly holder: string
  readonly host: string
  readonly pid: number
}

const iso = (ms: number) => new Date(ms).toISOString()

/** A new lease of `identity`, taken at `now`, lasting `ttlMs`. */
export const newLease = (identity: LeaseIdentity, now: number, ttlMs: number): Lease => ({
  holder: identity.holder,
  host: identity.host,
  pid: identity.pid,
  takenAt: iso(now),
  renewedAt: iso(now),
  expiresAt: iso(now + ttlMs)
})

/** `lease` renewed at `now` for another `ttlMs`. */
export const renewLease = (lease: Lease, now: number, ttlMs: number): Lease => ({ ...lease, renewedAt: iso(now), expiresAt: iso(now + ttlMs) })

/**
 * How often a holder renews: three times a TTL, so that one renewal lost to a slow remote still
 * leaves two before the lease lapses.
 */
export const renewalIntervalMs = (ttlMs: number) => Math.max(1, Math.floor(ttlMs / 3))
