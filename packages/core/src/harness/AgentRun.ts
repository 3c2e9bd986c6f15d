import { Duration, Effect, Fiber, Stream } from "effect"
import * as ByteBatches from "../bytes/ByteBatches.js"
import type { HarnessUsage } from "../domain/Domain.js"
import type { CaptureOf } from "./Capture.js"
import type { HarnessError, HarnessEvent, HarnessRequest, HarnessService } from "./HarnessService.js"
import type { IterationLog } from "../state/HistoryStore.js"
import { lend, type LoopReporter } from "../output/LoopReporter.js"
import { makeByteOutputLog } from "../output/ByteOutputLog.js"
import { makeOutputLog } from "../output/OutputLog.js"
import type { Redactor } from "../output/Redact.js"
import type { StateError } from "../state/StateError.js"
import { addUsage } from "../domain/Usage.js"

/** Adjacent texts joined, so that a chunk of text events is one write. */
const joinText = (pieces: ReadonlyArray<string | Uint8Array>): Array<string | Uint8Array> => {
  const out: Array<string | Uint8Array> = []
  for (const piece of pieces) {
    const last = out.length - 1
    if (typeof piece === "string" && typeof out[last] === "string") out[last] += piece
    else if (piece.length > 0) out.push(piece)
  }
  return out
}

/** What one chunk of events comes to: log pieces to write, batches done with once they are, the live view, new usage. */
interface ChunkWork {
  readonly pieces: Array<Uint8Array | string>
  readonly done: Array<Uint8Array>
  /** The live view: text, and bytes of plain output written as they came. */
  readonly shown: Array<string | Uint8Array>
  usage: boolean
}

class InactivityTimeout {
  readonly _tag = "InactivityTimeout"
}

class GuardStopped {
  readonly _tag = "GuardStopped"
  constructor(readonly reason: string) {}
}

/** Decodes each stream as it comes: a character split across two batches comes whole in the later text. */
const makeStreamText = () => {
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() }
  return {
    decode: (stream: "stdout" | "stderr", bytes: Uint8Array) => decoders[stream].decode(bytes, { stream: true }),
    end: (stream: "stdout" | "stderr") => decoders[stream].decode()
  }
}

/**
 * Runs the harness once, feeding `capture`: the log gets every byte (redacted line by line), the
 * terminal the live view (unless streaming is off), the detector the agent's own text. Events come
 * in chunks (a batch of output each): a chunk's log pieces are written together, once.
 */
export const runHarness = (options: {
  readonly harness: HarnessService["Type"]
  readonly request: HarnessRequest
  readonly capture: CaptureOf<unknown>
  readonly log: IterationLog
  readonly reporter: LoopReporter["Type"]
  readonly stream: boolean
  readonly inactivityTimeoutMs: number
  readonly redact: Redactor
  /** Called with this iteration's usage so far whenever the harness reports some. */
  readonly onUsage?: (usage: HarnessUsage) => Effect.Effect<void>
  /** Completes, with the reason, when a guard must stop the agent (a spend cap was reached). */
  readonly stopWhen?: Effect.Effect<string>
}): Effect.Effect<void, HarnessError | StateError> => {
  const { capture, log, reporter } = options
  // Stdout is logged as bytes, searched for secrets without decoding it, when the redactor says what
  // to search for; stderr (marked line by line) is logged as text.
  const anchors = options.redact.anchors
  const stdoutLog = anchors === undefined ? null : makeByteOutputLog(options.redact, anchors)
  const logs = { stdout: makeOutputLog(options.redact), stderr: makeOutputLog(options.redact, "[stderr] ") }
  const text = makeStreamText()
  // The log is written while the next batch is read: one write is under way at a time, in order.
  let writing: Fiber.RuntimeFiber<void, StateError> | null = null
  const finishWriting = Effect.suspend(() => writing === null ? Effect.void : Fiber.join(writing))
  const writeAll = (pieces: ReadonlyArray<Uint8Array | string>) => Effect.forEach(pieces, log.write, { discard: true })
  // A daemon, joined here: the stream runs each chunk in a fiber of its own, whose end would interrupt a child.
  // Once written, the chunk's batches are given back for reuse (`done`: nothing else refers to them).
  const writeLog = (pieces: ReadonlyArray<Uint8Array | string>, done: ReadonlyArray<Uint8Array>) =>
    Effect.zipRight(
      finishWriting,
      Effect.map(
        Effect.forkDaemon(Effect.zipRight(writeAll(pieces), Effect.sync(() => done.forEach(ByteBatches.give)))),
        (fiber) => void (writing = fiber)
      )
    )
  const timeout = Duration.millis(options.inactivityTimeoutMs)

  /** One event's share of the chunk's work: what it adds to the log and the live view, done synchronously. */
  const take = (event: HarnessEvent, out: ChunkWork) => {
    switch (event._tag) {
      case "Output": {
        capture[event.stream].append(event.bytes)
        if (event.stream === "stdout" && stdoutLog !== null) {
          for (const piece of stdoutLog.push(event.bytes)) out.pieces.push(piece)
          // Everything that keeps its bytes past this point copies them (the journal, the log's held bytes).
          out.done.push(event.bytes)
          if (!event.plain) return
          // Never decoded whole: shown as the bytes that came; the judge decodes only what it needs.
          capture.judge.feedBytes(event.bytes)
          if (options.stream) out.shown.push(event.bytes)
          return
        }
        const decoded = text.decode(event.stream, event.bytes)
        for (const piece of logs[event.stream].push(event.bytes, decoded)) out.pieces.push(piece)
        if (event.plain) {
          if (event.stream === "stdout") capture.judge.feed(decoded)
          if (options.stream) out.shown.push(decoded)
        }
        return
      }
      case "Display":
        if (options.stream) out.shown.push(event.text)
        return
      case "AgentText":
        return capture.judge.feed(event.text)
      case "Usage":
        capture.usage = addUsage(capture.usage, event.usage)
        out.usage = true
        return
      case "Warning":
        return void capture.warnings.push(event.message)
      case "Failed":
        return void (capture.error ??= event.message)
      case "Limited":
        return void (capture.limited = event)
      case "Exited":
        capture.exitCode = event.exitCode
        capture.signal = event.signal
        return
    }
  }

  return options.harness.run(options.request).pipe(
    Stream.timeoutFail(() => new InactivityTimeout(), timeout),
    // A guard stops the agent the same way as the inactivity timeout: the stream ends, the process group is stopped.
    Stream.interruptWhen(
      options.stopWhen === undefined ? Effect.never : Effect.flatMap(options.stopWhen, (reason) => Effect.fail(new GuardStopped(reason)))
    ),
    Stream.runForEachChunk((events) =>
      Effect.suspend(() => {
        const out: ChunkWork = { pieces: [], done: [], shown: [], usage: false }
        for (const event of events) take(event, out)
        const last = out.shown[out.shown.length - 1]
        if (last !== undefined) capture.displayAtLineStart = typeof last === "string" ? last.endsWith("\n") : last[last.length - 1] === 10
        const usage = capture.usage
        // The live view first: its bytes are done with once it is written, before the log gives the batches back.
        return Effect.all([
          Effect.forEach(joinText(out.shown), (piece) => reporter.write(typeof piece === "string" ? piece : lend(piece)), {
            discard: true
          }),
          out.pieces.length === 0 ? Effect.sync(() => out.done.forEach(ByteBatches.give)) : writeLog(out.pieces, out.done),
          !out.usage || usage === null || options.onUsage === undefined ? Effect.void : options.onUsage(usage)
        ], { discard: true })
      })
    ),
    Effect.zipRight(finishWriting),
    Effect.catchIf((error): error is InactivityTimeout => error instanceof InactivityTimeout, () =>
      Effect.sync(() => {
        capture.timedOut = true
        capture.warnings.push(`the harness printed nothing for ${Duration.format(timeout)} and was stopped`)
      })),
    Effect.catchIf((error): error is GuardStopped => error instanceof GuardStopped, (stop) =>
      Effect.sync(() => void (capture.stopped = stop.reason))),
    Effect.ensuring(
      Effect.suspend(() => {
        const pieces = stdoutLog !== null
          ? stdoutLog.flush()
          : [...logs.stdout.push(new Uint8Array(0), text.end("stdout")), ...logs.stdout.flush()]
        pieces.push(...logs.stderr.push(new Uint8Array(0), text.end("stderr")), ...logs.stderr.flush())
        const rest = pieces.length === 0 ? Effect.void : writeAll(pieces)
        return Effect.zipRight(finishWriting, rest).pipe(Effect.ignore)
      })
    )
  )
}
