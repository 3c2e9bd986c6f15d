import type { CommandExecutor, FileSystem } from "@effect/platform"
import type { HarnessService, SandboxNeeds } from "@spool/core"
import { Effect, type Layer } from "effect"
import type { InvocationShape } from "../host/Invocation.js"
import type { LoopRequest } from "../run/LoopRequest.js"
import { RequestError } from "../RequestError.js"
import { type AgentChoice, type HarnessName, harnessLayer, harnessNames, sandboxNeeds } from "./Harnesses.js"

/** One agent of a loop's list, ready to run: its name in records and views, its harness and its needs behind walls. */
export interface PreparedAgent {
  readonly id: string
  readonly harness: HarnessName
  readonly model: string | null
  readonly layer: Layer.Layer<HarnessService, never, FileSystem.FileSystem | CommandExecutor.CommandExecutor>
  readonly needs: SandboxNeeds
}

/** An agent as `--fallback` names it, one agent once: `claude`, `codex:gpt-5.5`, `command:./agent.sh --fast`. */
export const agentId = (choice: AgentChoice) => {
  const harness = choice.harness.trim()
  if (harness === "command") return `command:${(choice.harnessCommand ?? "").trim()}`
  return choice.model === null || choice.model.trim() === "" ? harness : `${harness}:${choice.model.trim()}`
}

/**
 * How records, limits and views name the agent at `index` of the list: as `agentId` does, but the
 * loop's own `--harness command` is `command`, as it always was: its command line, which may carry
 * what the person keeps to themselves, is named only where they wrote it in a `--fallback`.
 */
const shownId = (choice: AgentChoice, index: number) => (index === 0 && choice.harness.trim() === "command" ? "command" : agentId(choice))

/** The options that name further agents the way `--fallback` does. */
type AgentOption = "fallback" | "review"

const optionError = (option: AgentOption) => (message: string) => new RequestError({ message: `--${option} ${message}`, option })
const fallbackError = optionError("fallback")

/**
 * A `--fallback` (or a `--review`) as written (`<harness>[:<model>]`, or `command:<command line>`),
 * as the agent it names with the loop agent's other settings.
 */
export const fallbackChoice = (spec: string, loopAgent: AgentChoice, option: AgentOption = "fallback"): Effect.Effect<AgentChoice, RequestError> => {
  const fail = optionError(option)
  const text = spec.trim()
  const colon = text.indexOf(":")
  const harness = (colon < 0 ? text : text.slice(0, colon)).trim()
  const rest = colon < 0 ? null : text.slice(colon + 1).trim()
  if (text === "") return Effect.fail(fail(`needs an agent: <harness>[:<model>], e.g. --${option} codex:gpt-5.5`))
  if (!(harnessNames as ReadonlyArray<string>).includes(harness)) {
    return Effect.fail(fail(`'${text}': unknown harness '${harness}'; known harnesses: ${harnessNames.join(", ")}`))
  }
  if (rest === "") return Effect.fail(fail(`'${text}': nothing after the colon; give a model (${harness}:<model>), or leave the colon out`))
  if (harness === "command") {
    return rest === null
      ? Effect.fail(fail(`command needs its command line in the model's place: --${option} 'command:<program> <args>'`))
      : Effect.succeed({ ...loopAgent, harness, model: null, harnessCommand: rest })
  }
  return Effect.succeed({ ...loopAgent, harness, model: rest, harnessCommand: null })
}

/**
 * The agents of `request`, the loop's own first, then its fallbacks in order, each checked (a
 * harness that is known, each agent once, `--rotate` only with a fallback) and made ready.
 */
export const agentList = (request: Pick<LoopRequest, "agent" | "fallback" | "rotate">, invocation: InvocationShape, walled: boolean) =>
  Effect.gen(function*() {
    if (request.rotate && request.fallback.length === 0) {
      return yield* new RequestError({
        message: "--rotate takes the loop's agent and its fallbacks in turn; name one with --fallback <harness>[:<model>]",
        option: "rotate"
      })
    }
    const choices = [request.agent, ...(yield* Effect.forEach(request.fallback, (spec) => fallbackChoice(spec, request.agent)))]
    const agents: Array<PreparedAgent> = []
    const named: Array<string> = []
    for (const [index, choice] of choices.entries()) {
      const key = agentId(choice)
      if (named.includes(key)) {
        return yield* fallbackError(`names ${key} twice (the loop's --harness/--model is the first agent); give each agent once`)
      }
      named.push(key)
      const id = shownId(choice, index)
      const layer = yield* harnessLayer({ ...choice, walled }, invocation)
      const harness = choice.harness.trim() as HarnessName
      agents.push({ id, harness, model: harness === "command" ? null : choice.model, layer, needs: sandboxNeeds[harness] })
    }
    const [first, ...rest] = agents
    return [first!, ...rest] as const
  })

/**
 * The reviewers of `request` (`--review`), in order, each checked (a harness that is known, each
 * reviewer once, `--max-reviews` of 1 or more) and made ready; none when none is named.
 */
export const reviewerList = (request: Pick<LoopRequest, "agent" | "review" | "maxReviews">, invocation: InvocationShape, walled: boolean) =>
  Effect.gen(function*() {
    if (!Number.isInteger(request.maxReviews) || request.maxReviews < 1) {
      return yield* new RequestError({ message: `--max-reviews must be 1 or more, got ${request.maxReviews}: the reviews a run may turn down before it stops`, option: "max-reviews" })
    }
    const reviewers: Array<PreparedAgent> = []
    for (const spec of request.review) {
      const choice = yield* fallbackChoice(spec, request.agent, "review")
      const id = agentId(choice)
      if (reviewers.some((reviewer) => reviewer.id === id)) {
        return yield* optionError("review")(`names ${id} twice; give each reviewer once`)
      }
      const layer = yield* harnessLayer({ ...choice, walled }, invocation)
      const harness = choice.harness.trim() as HarnessName
      reviewers.push({ id, harness, model: harness === "command" ? null : choice.model, layer, needs: sandboxNeeds[harness] })
    }
    return reviewers
  })
