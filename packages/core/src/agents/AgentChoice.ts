import { backoffMs, RESET_MARGIN_MS, type UsageLimit } from "../guards/LimitWait.js"

/**
 * The one policy for choosing a loop's agent, among the person's list (the loop's agent first,
 * then its fallbacks): the first that no usage limit holds, or with rotation the next in turn that
 * none holds; only when every agent is held does the loop wait, for the hold that ends first.
 */

/** When each limited agent, by its id, may run again (epoch ms; Infinity: not in this run). */
export type AgentHolds = ReadonlyMap<string, number>

/** How the loop takes its agents: the first free (`rotate` false), or each in turn. */
export interface AgentTurn {
  readonly rotate: boolean
  /** The index of the agent that ran the last iteration; null before the first. */
  readonly last: number | null
}

/**
 * What the next iteration runs:
 * - `Run`: the agent at `index`; `skipped` are the agents before it in the order of choice that a
 *   limit holds (their indexes)
 * - `Wait`: every agent is held; the one at `index` is free first, at `until`
 */
export type AgentPick =
  | { readonly _tag: "Run"; readonly index: number; readonly skipped: ReadonlyArray<number> }
  | { readonly _tag: "Wait"; readonly index: number; readonly until: number }

/** The agents' indexes in the order they are chosen in: the list's, or with rotation from the one after the last. */
export const choiceOrder = (count: number, turn: AgentTurn): ReadonlyArray<number> => {
  const first = turn.rotate && turn.last !== null ? (turn.last + 1) % count : 0
  return Array.from({ length: count }, (_, offset) => (first + offset) % count)
}

/** Whether `agent` is held by a limit at `now`. */
export const isHeld = (holds: AgentHolds, agent: string, now: number) => (holds.get(agent) ?? Number.NEGATIVE_INFINITY) > now

/** The agent the next iteration runs, or the wait for the first to be free, by the one policy above. */
export const pickAgent = (agents: ReadonlyArray<string>, holds: AgentHolds, now: number, turn: AgentTurn): AgentPick => {
  const order = choiceOrder(agents.length, turn)
  const skipped: Array<number> = []
  for (const index of order) {
    if (!isHeld(holds, agents[index]!, now)) return { _tag: "Run", index, skipped }
    skipped.push(index)
  }
  // Every agent is held: the earliest hold, the first in the order of choice among equals.
  let first = order[0]!
  for (const index of order) if (holds.get(agents[index]!)! < holds.get(agents[first]!)!) first = index
  return { _tag: "Wait", index: first, until: holds.get(agents[first]!)! }
}

/**
 * How long a limit an agent met holds it off, when another agent can run meanwhile: until its
 * reset time, or as long as its `retry-after`, or else a backoff that doubles with each limit met
 * in a row (`backoffs` before this one); a limit that does not reset by waiting holds it until the
 * time the agent named, else for the rest of the run.
 */
export const holdUntil = (limit: UsageLimit, now: number, backoffs: number): number => {
  // A reset time already past (the provider's clock behind ours) holds the agent for the margin, never not at all.
  const reset = limit.resetAt === null ? null : limit.resetAt > now ? limit.resetAt : now + RESET_MARGIN_MS
  const known = reset !== null ? reset : limit.retryAfterMs !== null ? now + Math.max(1_000, limit.retryAfterMs) : null
  if (!limit.resets) return known ?? Number.POSITIVE_INFINITY
  return known ?? now + backoffMs(backoffs)
}

/**
 * A limit an agent met, `backoffs` limits without a reset time or retry-after met in a row before
 * it: until when it holds the agent, and the count the next limit of that agent goes on from.
 */
export const holdAfter = (limit: UsageLimit, now: number, backoffs: number): { readonly until: number; readonly backoffs: number } => ({
  until: holdUntil(limit, now, backoffs),
  backoffs: limit.resetAt === null && limit.retryAfterMs === null ? backoffs + 1 : backoffs
})

/** A change of agent a person is told of: off an agent a limit holds, or back to one whose limit has lifted. */
export interface AgentSwitch {
  /** The agent that ran the last iteration, else the one passed over. */
  readonly from: string
  readonly to: string
  /** `limited`: `held` is passed over, held by a limit until `until`; `lifted`: `held`'s limit has lifted. */
  readonly why: "limited" | "lifted"
  readonly held: string
  /** Until when `held` is held (epoch ms; Infinity: not in this run); null when its limit lifted. */
  readonly until: number | null
}

/**
 * The switch `pick` makes at `now` after the agent at `previous` ran the last iteration (null:
 * none yet), if it is one a person is told of: off the agent that ran last, once a limit holds it,
 * or past a limited agent to another; or (without rotation) the return to an agent earlier in the
 * list once nothing holds it. Rotation's own turns are no switch.
 */
export const switchOf = (
  agents: ReadonlyArray<string>,
  holds: AgentHolds,
  now: number,
  previous: number | null,
  pick: Extract<AgentPick, { _tag: "Run" }>,
  rotate: boolean
): AgentSwitch | null => {
  if (pick.index === previous) return null
  const to = agents[pick.index]!
  // The agent that ran last, when a limit now holds it (with rotation too); else the first passed over.
  const passed = previous !== null && isHeld(holds, agents[previous]!, now) ? previous : pick.skipped[0]
  if (passed !== undefined) {
    const held = agents[passed]!
    return { from: agents[previous ?? passed]!, to, why: "limited", held, until: holds.get(held)! }
  }
  if (rotate || previous === null || pick.index > previous) return null
  return { from: agents[previous]!, to, why: "lifted", held: to, until: null }
}
