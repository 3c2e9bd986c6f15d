import { LoopReporter } from "@spool/core"
import { Context, Effect, Layer, type Scope } from "effect"

/**
 * Where a run or a sweep says what it does, beside each loop's own reporter: the CLI's terminal,
 * or whatever a program that embeds the application writes to.
 */
export class Reports extends Context.Tag("@spool/app/Reports")<Reports, {
  /** One line of the command's answer (a sweep's heading, a merge, its summary). */
  readonly print: (text: string) => Effect.Effect<void>
  /** A warning that no one loop says (a notice that could not be told, a state not written). */
  readonly warn: (text: string) => Effect.Effect<void>
  /** A loop's own reporter, for as long as the scope lasts. */
  readonly reporterFor: (changeId: string) => Effect.Effect<LoopReporter["Type"], never, Scope.Scope>
  /** For as long as the scope lasts, the loops of `changeIds` run side by side. */
  readonly sideBySide: (changeIds: ReadonlyArray<string>) => Effect.Effect<void, never, Scope.Scope>
}>() {
  /**
   * Every line handed to `write`, as it is said: a loop's lines begin `[<change>] `, its warnings
   * `warning: `, its live output is left out (a program that wants it gives a reporter of its own).
   */
  static readonly lines = (write: (line: string) => void) =>
    Layer.succeed(Reports, {
      print: (text) => Effect.sync(() => write(text)),
      warn: (text) => Effect.sync(() => write(`warning: ${text}`)),
      reporterFor: (changeId) =>
        Effect.succeed({
          write: () => Effect.void,
          line: (text) => Effect.sync(() => write(`[${changeId}] ${text}`)),
          warn: (text) => Effect.sync(() => write(`[${changeId}] warning: ${text}`))
        }),
      sideBySide: () => Effect.void
    })
}

/** A loop's `LoopReporter`, from the reports, while the layer lasts. */
export const loopReporter = (changeId: string) =>
  Layer.scoped(LoopReporter, Effect.flatMap(Reports, (reports) => reports.reporterFor(changeId)))
