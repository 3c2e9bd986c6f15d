import type { CommandExecutor, FileSystem } from "@effect/platform"
import { HarnessService, type LoopOptions, type NotifySettings, Workspace } from "@spool/core"
import { Effect, type Layer } from "effect"
import { harnessLayer } from "../agents/Harnesses.js"
import { Invocation } from "../host/Invocation.js"
import { notifySettings } from "../notices/Notices.js"
import { requestError } from "../RequestError.js"
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
}

/** The agent, the remote and the notices of `request`, checked; every mistake is a request error here. */
export const prepareLoop = (request: LoopRequest) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const harness = yield* harnessLayer(request.agent, invocation)
    const { remote } = request
    if (remote !== null && !/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(remote.name)) {
      return yield* requestError(`--remote must name a git remote (as git remote -v lists them), got '${remote.name}'`, "remote")
    }
    const notify = yield* notifySettings(request.notices, (yield* Workspace).root)
    return {
      userPrompt: request.prompt.trim() === "" ? "Implement the change proposal below." : request.prompt,
      options: request.options,
      request,
      harness,
      worktree: request.worktree || remote !== null,
      remote,
      notify,
      secrets: notify?.targets.flatMap((target) => (target._tag === "Webhook" ? [target.url] : [])) ?? []
    } satisfies PreparedLoop
  })

/** The agent of `prepared` checked before anything is touched: one that cannot start fails here. */
export const preflight = (prepared: PreparedLoop) =>
  Effect.flatMap(HarnessService, (agent) => agent.preflight).pipe(Effect.provide(prepared.harness))
