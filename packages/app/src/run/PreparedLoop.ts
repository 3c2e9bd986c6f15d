import type { CommandExecutor, FileSystem } from "@effect/platform"
import { HarnessService, type LoopOptions, type NotifySettings, Workspace } from "@spool/core"
import { Effect, type Layer } from "effect"
import { type HarnessName, harnessLayer, sandboxNeeds } from "../agents/Harnesses.js"
import { Invocation } from "../host/Invocation.js"
import { notifySettings } from "../notices/Notices.js"
import { requestError } from "../RequestError.js"
import { openWalls, type Walls } from "../sandbox/Walls.js"
import type { LoopRequest, RemoteRequest } from "./LoopRequest.js"

/** What every loop of one request shares, checked once, before any loop runs. */
export interface PreparedLoop {
  readonly userPrompt: string
  readonly options: LoopOptions
  readonly request: LoopRequest
  readonly harness: Layer.Layer<HarnessService, never, FileSystem.FileSystem | CommandExecutor.CommandExecutor>
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
    const harness = yield* harnessLayer({ ...request.agent, walled }, invocation)
    const { remote } = request
    if (remote !== null && !/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(remote.name)) {
      return yield* requestError(`--remote must name a git remote (as git remote -v lists them), got '${remote.name}'`, "remote")
    }
    const notify = yield* notifySettings(request.notices, (yield* Workspace).root)
    const walls = request.sandbox === null ? null : yield* openWalls(request.sandbox, sandboxNeeds[request.agent.harness.trim() as HarnessName])
    return {
      userPrompt: request.prompt.trim() === "" ? "Implement the change proposal below." : request.prompt,
      options: request.options,
      request,
      harness,
      worktree: request.worktree || remote !== null,
      remote,
      notify,
      secrets: notify?.targets.flatMap((target) => (target._tag === "Webhook" ? [target.url] : [])) ?? [],
      walls
    } satisfies PreparedLoop
  })

/** The agent of `prepared` checked before anything is touched: one that cannot start fails here. */
export const preflight = (prepared: PreparedLoop) =>
  Effect.flatMap(HarnessService, (agent) => agent.preflight).pipe(Effect.provide(prepared.harness))
