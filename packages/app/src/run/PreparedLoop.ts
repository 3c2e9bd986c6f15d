import { GitSummary, HarnessService, type LoopOptions, type NotifySettings, Workspace } from "@spool/core"
import { Effect } from "effect"
import { agentList, type PreparedAgent, reviewerList } from "../agents/AgentList.js"
import { Invocation } from "../host/Invocation.js"
import { notifySettings } from "../notices/Notices.js"
import { gitLayer } from "../place/GitLayer.js"
import { requestError } from "../RequestError.js"
import { openWalls, type Walls } from "../sandbox/Walls.js"
import type { LoopRequest, RemoteRequest } from "./LoopRequest.js"

/** What every loop of one request shares, checked once, before any loop runs. */
export interface PreparedLoop {
  readonly userPrompt: string
  readonly options: LoopOptions
  readonly request: LoopRequest
  /** The agents the loops run, the loop's own first, then its fallbacks. */
  readonly agents: readonly [PreparedAgent, ...Array<PreparedAgent>]
  /** Take the agents in turn, one iteration each. */
  readonly rotate: boolean
  /** The reviewers of a claim that passed the checks, in order; none: no review. */
  readonly reviewers: ReadonlyArray<PreparedAgent>
  readonly maxReviews: number
  /** Run in a worktree of its own. */
  readonly worktree: boolean
  readonly remote: RemoteRequest | null
  /** A sweep merges the work once the change completes: no hint to merge it by hand. */
  readonly merged?: boolean
  /** Who is told of the loops' events; null: nobody. */
  readonly notify: NotifySettings | null
  /** Values to hide wherever the agent's output is kept, beside the environment's secrets: the webhooks' URLs. */
  readonly secrets: ReadonlyArray<string>
  /** The sandbox every agent and check of the run is in; null: none (`--sandbox` not given). */
  readonly walls: Walls | null
}

/**
 * The agent, the remote, the notices and the sandbox of `request`, checked; every mistake is a
 * request error here. The sandbox is started for as long as the scope lasts.
 */
export const prepareLoop = (request: LoopRequest) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const walled = request.sandbox !== null
    const agents = yield* agentList(request, invocation, walled)
    const reviewers = yield* reviewerList(request, invocation, walled)
    if (reviewers.length > 0 && !(yield* GitSummary.pipe(Effect.provide(gitLayer((yield* Workspace).root)))).repository) {
      return yield* requestError("--review reads the work under review from git: run it in a git repository (git init, then commit)", "review")
    }
    const { remote } = request
    if (remote !== null && !/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(remote.name)) {
      return yield* requestError(`--remote must name a git remote (as git remote -v lists them), got '${remote.name}'`, "remote")
    }
    const notify = yield* notifySettings(request.notices, (yield* Workspace).root)
    const walls = request.sandbox === null ? null : yield* openWalls(request.sandbox)
    return {
      userPrompt: request.prompt.trim() === "" ? "Implement the change proposal below." : request.prompt,
      options: request.options,
      request,
      agents,
      rotate: request.rotate,
      reviewers,
      maxReviews: request.maxReviews,
      worktree: request.worktree || remote !== null,
      remote,
      notify,
      secrets: notify?.targets.flatMap((target) => (target._tag === "Webhook" ? [target.url] : [])) ?? [],
      walls
    } satisfies PreparedLoop
  })

/** Every agent and reviewer of `prepared` checked before anything is touched: one that cannot start fails here. */
export const preflight = (prepared: PreparedLoop) =>
  Effect.forEach([...prepared.agents, ...prepared.reviewers], (agent) => Effect.flatMap(HarnessService, (service) => service.preflight).pipe(Effect.provide(agent.layer)), {
    discard: true
  })
