import { Context, Effect, Layer } from "effect"
import type { HarnessUsage } from "../domain/Domain.js"

/** Where a running loop stands, for a live status line. */
export interface LoopProgress {
  readonly iteration: number
  readonly maxIterations: number
  /** Tokens and cost the harness reported so far in this run, the running iteration included. */
  readonly usage: HarnessUsage | null
}

declare const Lent: unique symbol

/**
 * Bytes an agent printed, lent for the length of one write: they are part of a pooled batch
 * (`ByteBatches`), overwritten by later output once the write's effect has completed. Write them
 * out or read them during the write; what is kept past it is a copy made with `keep`.
 */
export type LentBytes = Uint8Array & { readonly [Lent]: true }

/** Marks `bytes` as lent: whoever is handed them must not keep them past the write. */
export const lend = (bytes: Uint8Array): LentBytes => bytes as LentBytes

/** An owned copy of lent bytes, safe to keep once the write is over. */
export const keep = (bytes: LentBytes): Uint8Array => bytes.slice()

/** Where the loop talks to the person running it. The CLI writes to the terminal; tests capture. */
export class LoopReporter extends Context.Tag("@spool/core/LoopReporter")<LoopReporter, {
  /**
   * Live agent output, as it comes (no newline added): text, or bytes the agent printed, written
   * as they are. The bytes are lent (`LentBytes`): the effect completes once the output no longer
   * needs them, and they are reused after; a reporter that keeps output keeps a `keep` copy.
   */
  readonly write: (output: string | LentBytes) => Effect.Effect<void>
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
      // Decoded during the write: the text is the reporter's own, whatever becomes of the lent bytes.
      write: (output) => Effect.sync(() => void into.push(typeof output === "string" ? output : new TextDecoder().decode(output))),
      line: (text) => Effect.sync(() => void into.push(`${text}\n`)),
      warn: (text) => Effect.sync(() => void into.push(`warning: ${text}\n`)),
      progress: (report) => Effect.sync(() => void progress.push(report))
    })
}
