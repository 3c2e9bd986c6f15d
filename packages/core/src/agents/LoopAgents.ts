import { Context, Effect, Option } from "effect"
import { HarnessService } from "../harness/HarnessService.js"

/** One agent a loop may run: a harness, with its model. */
export interface LoopAgent {
  /**
   * The agent as records, limits and views name it: the harness, with its model after a colon
   * (`claude`, `codex:gpt-5.5`); a command by its command line (`command:./agent.sh --fast`).
   */
  readonly id: string
  readonly harness: string
  /** The model asked for; null: the harness's own. */
  readonly model: string | null
  readonly service: HarnessService["Type"]
}

/**
 * The agents a loop runs: the loop's own first, then those it falls back to on a usage limit, in
 * order of preference; with `rotate`, each in turn, one iteration each.
 */
// Stryker disable next-line StringLiteral: the key only tells services apart in a context, and no other service has an empty one
export class LoopAgents extends Context.Tag("@spool/core/LoopAgents")<LoopAgents, {
  readonly agents: readonly [LoopAgent, ...Array<LoopAgent>]
  readonly rotate: boolean
}>() {}

/** The agents of the loop: those given, else the one `HarnessService` runs, by its name. */
export const loopAgents = Effect.gen(function*() {
  const given = yield* Effect.serviceOption(LoopAgents)
  if (Option.isSome(given)) return given.value
  const service = yield* Effect.serviceOption(HarnessService)
  if (Option.isNone(service)) return yield* Effect.dieMessage("a loop needs its agents (LoopAgents) or one agent (HarnessService)")
  const only: LoopAgent = { id: service.value.name, harness: service.value.name, model: null, service: service.value }
  return { agents: [only] as const, rotate: false } satisfies LoopAgents["Type"]
})
