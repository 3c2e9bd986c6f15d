import { Context, Data, Effect, Layer, Schema, Stream } from "effect"
import type { ChangeId, HarnessUsage } from "../domain/Domain.js"

/**
 * The harness could not run at all: a fatal error, unlike an iteration whose agent exited non-zero.
 * `Refused`: the agent would refuse to run with these settings (found before the first iteration).
 */
export class HarnessError extends Schema.TaggedError<HarnessError>()("HarnessError", {
  harness: Schema.String,
  reason: Schema.Literal("NotFound", "NotExecutable", "Refused", "SpawnFailed", "Io"),
  detail: Schema.String
}) {
  override get message() {
    switch (this.reason) {
      case "NotFound":
      case "NotExecutable":
      case "Refused":
        return `${this.harness} harness cannot start: ${this.detail}`
      default:
        return `${this.harness} harness failed: ${this.detail}`
    }
  }
}

export interface HarnessRequest {
  readonly prompt: string
  readonly changeId: ChangeId
  readonly iteration: number
  /** The repository root: the agent works there. */
  readonly cwd: string
}

/**
 * What a harness run reports, in order; the last event is always `Exited`.
 * - `Output`: raw output of the agent process (a batch of bytes), kept in the iteration log and
 *   the error journal; `plain` when the bytes are also the live view and, on stdout, the agent's
 *   own text (a harness with no structured output), so they need no events of their own
 * - `Display`: the readable live view shown to the user when streaming
 * - `AgentText`: what the agent itself says; only this is searched for the completion promise
 * - `Usage`: tokens and cost the agent reported
 * - `Warning`: something the user should know about the iteration (e.g. permissions were rejected)
 * - `Failed`: the agent reported that its run failed (a model/API error, a run that ended without
 *   its final result), whatever its exit code: the iteration is a failure carrying this message
 * - `Limited`: the agent hit a usage or rate limit, read from its error channels only (never from
 *   its ordinary text); `resetAt` is when it lifts (epoch ms) when the agent says so, `resets` is
 *   false for a quota that does not reset by waiting
 *
 * JSON harnesses report each top-level assistant message as `AgentText` ending with a newline, so
 * that two messages never run together on one line.
 */
export type HarnessEvent = Data.TaggedEnum<{
  Output: { readonly stream: "stdout" | "stderr"; readonly bytes: Uint8Array; readonly plain: boolean }
  Display: { readonly text: string }
  AgentText: { readonly text: string }
  Usage: { readonly usage: HarnessUsage }
  Warning: { readonly message: string }
  Failed: { readonly message: string }
  Limited: {
    readonly message: string
    readonly resetAt: number | null
    readonly retryAfterMs: number | null
    readonly resets: boolean
  }
  Exited: { readonly exitCode: number | null; readonly signal: string | null }
}>
export const HarnessEvent = Data.taggedEnum<HarnessEvent>()

/** Runs one prompt through an agent. Which agent is chosen by the layer provided. */
export class HarnessService extends Context.Tag("@spool/core/HarnessService")<HarnessService, {
  readonly name: string
  /** What the agent reports of its usage: a spend cap on something it does not report is refused before the run. */
  readonly reports: { readonly cost: boolean; readonly tokens: boolean }
  /** Checks, before the first iteration, that the agent can be started at all. */
  readonly preflight: Effect.Effect<void, HarnessError>
  /**
   * Starts the agent. Interrupting the stream stops the agent and every process it started
   * (SIGTERM to its process group, then SIGKILL after a grace period).
   */
  readonly run: (request: HarnessRequest) => Stream.Stream<HarnessEvent, HarnessError>
}>() {
  /**
   * A scripted harness for loop tests: iteration N replays `script(request)`; prompts are recorded in `prompts`.
   */
  static readonly layerTest = (
    script: (request: HarnessRequest) => ReadonlyArray<HarnessEvent>,
    prompts: Array<HarnessRequest> = [],
    reports: { readonly cost: boolean; readonly tokens: boolean } = { cost: true, tokens: true }
  ) =>
    Layer.succeed(HarnessService, {
      name: "test",
      reports,
      preflight: Effect.void,
      run: (request) =>
        Stream.suspend(() => {
          prompts.push(request)
          return Stream.fromIterable(script(request))
        })
    })
}

const encoder = new TextEncoder()

/** Output of `text` (not plain unless asked): for tests and scripted harnesses. */
export const outputOf = (stream: "stdout" | "stderr", text: string, plain = false): HarnessEvent =>
  HarnessEvent.Output({ stream, bytes: encoder.encode(text), plain })

/** An agent that prints `text` on stdout and exits with `exitCode`: the events the command harness would report. */
export const scriptedRun = (text: string, exitCode = 0): ReadonlyArray<HarnessEvent> => [
  outputOf("stdout", text, true),
  HarnessEvent.Exited({ exitCode, signal: null })
]
