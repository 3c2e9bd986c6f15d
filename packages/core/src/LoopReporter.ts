import { Context, Effect, Layer } from "effect"

/** Where the loop talks to the person running it. The CLI writes to the terminal; tests capture. */
export class LoopReporter extends Context.Tag("@spool/core/LoopReporter")<LoopReporter, {
  /** Live agent output, as it comes (no newline added). */
  readonly write: (text: string) => Effect.Effect<void>
  /** One line on stdout. */
  readonly line: (text: string) => Effect.Effect<void>
  /** One warning line on stderr. */
  readonly warn: (text: string) => Effect.Effect<void>
}>() {
  /** Collects everything in `into`: live output verbatim, lines with a newline, warnings prefixed `warning: `. */
  static readonly layerTest = (into: Array<string>) =>
    Layer.succeed(LoopReporter, {
      write: (text) => Effect.sync(() => void into.push(text)),
      line: (text) => Effect.sync(() => void into.push(`${text}\n`)),
      warn: (text) => Effect.sync(() => void into.push(`warning: ${text}\n`))
    })
}
