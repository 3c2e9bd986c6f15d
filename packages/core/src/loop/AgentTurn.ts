import { Clock, Effect, Ref } from "effect"
import { type AgentHolds, type AgentPick, holdAfter, pickAgent, switchOf } from "../agents/AgentChoice.js"
import { type AgentNote, countTokens, type IterationRecord } from "../domain/Domain.js"
import { addCost } from "../domain/Usage.js"
import { clock, type UsageLimit } from "../guards/LimitWait.js"
import type { LimitHolds } from "../guards/UsageLimitGate.js"
import { LoopEvent, LoopEvents } from "../live/LoopEvents.js"
import { LoopReporter } from "../output/LoopReporter.js"
import type { LoopRun } from "./LoopRun.js"

const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : null)

/** Each agent's note with the limits the gate knows now (a finite hold is kept for the next run to read). */
const withHolds = (notes: ReadonlyArray<AgentNote>, held: LimitHolds) =>
  notes.map((note) => {
    const hold = held.get(note.agent)
    return { ...note, limitedUntil: hold === undefined ? null : iso(hold.until) }
  })

/**
 * The agent iteration `iteration` runs, by the one choice policy over the limits the gate holds
 * now: said, told (`AgentSwitched`) and kept in the state when it is a switch a person cares about;
 * or, when every agent is held, the wait for the first free. The holds are returned too.
 */
export const chooseAgent = (run: LoopRun, iteration: number) =>
  Effect.gen(function*() {
    const reporter = yield* LoopReporter
    const events = yield* LoopEvents
    const { agents, rotate } = run.agents
    const ids = agents.map((agent) => agent.id)
    const held = yield* run.gate.held
    const holds: AgentHolds = new Map([...held].map(([agent, hold]) => [agent, hold.until]))
    const notes = yield* Ref.get(run.agentNotes)
    // Kept for the next state the run saves.
    yield* Ref.set(run.agentNotes, withHolds(notes, held))
    const previous = yield* Ref.get(run.lastAgent)
    const now = yield* Clock.currentTimeMillis
    const pick: AgentPick = pickAgent(ids, holds, now, { rotate, last: previous })
    if (pick._tag === "Wait") return { pick, held }
    const change = switchOf(ids, holds, now, previous, pick, rotate)
    if (change !== null) {
      const until = change.until === null ? null : iso(change.until)
      yield* reporter.line(
        change.why === "limited"
          ? `switching to ${change.to}: ${change.held} is held by its usage limit ${until === null ? "for the rest of the run" : `until ${clock(change.until!)}`}`
          : `back to ${change.to}: its usage limit has lifted`
      )
      yield* events.publish(LoopEvent.AgentSwitched({ changeId: run.input.change.id, run: run.runId, iteration, ...change, until }))
    }
    yield* Ref.set(run.lastAgent, pick.index)
    if (agents.length > 1 || rotate) yield* run.saveState({ agent: ids[pick.index]! })
    return { pick, held }
  })

/** The agent at `index` ran `record`: its iterations and spend grow, for the next state the run saves. */
export const noteIteration = (run: LoopRun, index: number, record: IterationRecord) =>
  Ref.update(run.agentNotes, (notes) =>
    notes.map((note, i) =>
      i !== index ? note : {
        ...note,
        iterations: note.iterations + 1,
        costUsd: record.usage === null ? note.costUsd : addCost(note.costUsd, record.usage.cost),
        tokens: note.tokens + (record.usage === null ? 0 : countTokens(record.usage))
      }
    ))

/**
 * The agent at `index` met `limit`: it is held (until its reset, else for a backoff that grows
 * with each limit met in a row without one), for this loop and those sharing its gate.
 */
export const noteLimit = (run: LoopRun, index: number, limit: UsageLimit, backoffs: Map<string, number>) =>
  Effect.gen(function*() {
    const agent = run.agents.agents[index]!.id
    const hold = holdAfter(limit, yield* Clock.currentTimeMillis, backoffs.get(agent) ?? 0)
    backoffs.set(agent, hold.backoffs)
    yield* run.gate.report(agent, hold.until)
    // The gate knows every limit: the notes take them all, for the next state the run saves.
    const held = yield* run.gate.held
    yield* Ref.update(run.agentNotes, (notes) => withHolds(notes, held))
  })
