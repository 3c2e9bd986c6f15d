import { Context, Effect, Layer } from "effect"
import type { HarnessUsage } from "../domain/Domain.js"

/** Where a running loop stands, for a live status line. */
export interface LoopProgress {
  readonly iteration: number
  readonly maxIterations: number
  /** Tokens and cost the harness reported so far in this run, the running iteration included. */
  readonly usage: HarnessUsage | null
}

/** Where the loop talks to the person running it. The CLI writes to the terminal; tests capture. */
export class LoopReporter extends Context.Tag("@spool/core/LoopReporter")<LoopReporter, {
  /**
   * Live agent output, as it comes (no newline added): text, or bytes the agent printed, written
   * as they are. The effect completes once the output no longer needs the bytes (they may be reused).
   */
  readonly write: (output: string | Uint8Array) => Effect.Effect<void>
  /** One line on stdout. */
  readonly line: (text: string) => Effect.Effect<void>
  /** One warning line on stderr. */
  readonly warn: (text: string) => Effect.Effect<void>
  /** Where the loop stands: at the start of each iteration and whenever the harness reports usage. Reporters without a live status line leave it out. */
  readonly progress?: (progress: LoopProgress) => Effect.Effect<void>
}>() {
  /** Collects everything in `into`: live output verbatim, lines with a newline, warnings prefixed `warning: `; progress reports in `progress`. */
  static readonly layerTest = (into: Array<string>, progress: Array<LoopProgress> = []) =>
    Layer.succeed(LoopReporter, {
      write: (output) => Effect.sync(() => void into.push(typeof output === "string" ? output : new TextDecoder().decode(output))),
      line: (text) => Effect.sync(() => void into.push(`${text}\n`)),
      warn: (text) => Effect.sync(() => void into.push(`warning: ${text}\n`)),
      progress: (report) => Effect.sync(() => void progress.push(report))
    })
}
