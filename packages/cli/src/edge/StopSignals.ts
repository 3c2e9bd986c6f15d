import { Context, Effect, Layer, Stream } from "effect"
import type { StopSignal } from "../ExitCode.js"
import { type ProcessOutput, type SignalSource, stopSignals } from "./Started.js"

/**
 * The reasons to stop that come from outside spool, in the order they come: a signal, or its output
 * closing (`EPIPE`: nobody reads it any more).
 */
export class StopSignals extends Context.Tag("@spool/cli/StopSignals")<StopSignals, Stream.Stream<StopSignal>>() {}

/** A write that failed because the output is gone for good: its reader quit, or its terminal closed. */
const outputGone = (error: NodeJS.ErrnoException) => error.code === "EPIPE" || error.code === "EIO"

/**
 * The process's signals, and its outputs failing for good: listened to while the stream runs, the
 * listeners taken away when it ends.
 */
export const fromProcess = (signals: SignalSource, outputs: ReadonlyArray<Pick<ProcessOutput, "on" | "off">>): Stream.Stream<StopSignal> =>
  Stream.asyncScoped<StopSignal>((emit) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const onSignal = stopSignals.map((signal) => [signal, () => void emit.single(signal)] as const)
        const onError = (error: NodeJS.ErrnoException) => {
          if (outputGone(error)) void emit.single("EPIPE")
        }
        for (const [signal, listener] of onSignal) signals.on(signal, listener)
        for (const output of outputs) output.on("error", onError)
        return { onSignal, onError }
      }),
      ({ onError, onSignal }) =>
        Effect.sync(() => {
          for (const [signal, listener] of onSignal) signals.off(signal, listener)
          for (const output of outputs) output.off("error", onError)
        })
    )
  )

/** The stops of the process `signals` is, whose stdout and stderr are `outputs`. */
export const layer = (signals: SignalSource, outputs: ReadonlyArray<Pick<ProcessOutput, "on" | "off">>) =>
  Layer.succeed(StopSignals, fromProcess(signals, outputs))
