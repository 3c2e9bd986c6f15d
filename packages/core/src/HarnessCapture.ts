import { Duration, Effect, Stream } from "effect"
import { makeCompletionJudge } from "./CompletionJudge.js"
import type { HarnessUsage } from "./Domain.js"
import type { HarnessError, HarnessEvent, HarnessRequest, HarnessService } from "./HarnessService.js"
import type { IterationLog } from "./HistoryStore.js"
import { makeHeadTail } from "./JournalEntry.js"
import type { LoopReporter } from "./LoopReporter.js"
import type { StateError } from "./StateError.js"

/** How much of each stream an error journal entry keeps: this much from the start and from the end. */
export const JOURNAL_STREAM_HALF = 128 * 1024

/** Unknown only while every part is unknown. */
export const addCost = (a: number | null, b: number | null): number | null => a === null ? b : b === null ? a : a + b

/** `next` added to `total` (null: nothing reported yet). */
export const addUsage = (total: HarnessUsage | null, next: HarnessUsage): HarnessUsage =>
  total === null ? next : {
    inputTokens: total.inputTokens + next.inputTokens,
    outputTokens: total.outputTokens + next.outputTokens,
    reasoningTokens: total.reasoningTokens + next.reasoningTokens,
    cacheReadTokens: total.cacheReadTokens + next.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + next.cacheWriteTokens,
    cost: addCost(total.cost, next.cost)
  }

/** Redacts whole lines only, so a secret split across two chunks is still caught; a line is cut at 64 KiB. */
const makeLineRedactor = (redact: (text: string) => string) => {
  let partial = ""
  return {
    push: (text: string) => {
      const joined = partial + text
      const cut = joined.lastIndexOf("\n")
      if (cut === -1 && joined.length < 64 * 1024) {
        partial = joined
        return ""
      }
      const end = cut === -1 ? joined.length : cut + 1
      partial = joined.slice(end)
      return redact(joined.slice(0, end))
    },
    flush: () => {
      const rest = partial
      partial = ""
      return rest === "" ? "" : redact(rest)
    }
  }
}

/**
 * Everything one harness run reported, gathered as it streams, in bounded memory. `echoReference`
 * is the prompt text an echo is recognised against.
 */
export const makeCapture = (completionPromise: string, echoReference: string) => {
  const judge = makeCompletionJudge({ token: completionPromise, prompt: echoReference })
  return {
    judge,
    exitCode: null as number | null,
    signal: null as string | null,
    timedOut: false,
    /** Why a guard stopped the agent mid-run (a spend cap), if one did. */
    stopped: null as string | null,
    usage: null as HarnessUsage | null,
    /** The failure the agent reported (`Failed`), the first one kept. */
    error: null as string | null,
    /** The usage limit the agent hit (`Limited`), the last one kept. */
    limited: null as Extract<HarnessEvent, { _tag: "Limited" }> | null,
    warnings: [] as Array<string>,
    stdout: makeHeadTail(JOURNAL_STREAM_HALF),
    stderr: makeHeadTail(JOURNAL_STREAM_HALF),
    displayAtLineStart: true
  }
}
export type Capture = ReturnType<typeof makeCapture>

class InactivityTimeout {
  readonly _tag = "InactivityTimeout"
}

class GuardStopped {
  readonly _tag = "GuardStopped"
  constructor(readonly reason: string) {}
}

/**
 * Runs the harness once, feeding `capture`: the log gets every byte (redacted line by line), the
 * terminal the live view (unless streaming is off), the detector the agent's own text.
 */
export const runHarness = (options: {
  readonly harness: HarnessService["Type"]
  readonly request: HarnessRequest
  readonly capture: Capture
  readonly log: IterationLog
  readonly reporter: LoopReporter["Type"]
  readonly stream: boolean
  readonly inactivityTimeoutMs: number
  readonly redact: (text: string) => string
  /** Called with this iteration's usage so far whenever the harness reports some. */
  readonly onUsage?: (usage: HarnessUsage) => Effect.Effect<void>
  /** Completes, with the reason, when a guard must stop the agent (a spend cap was reached). */
  readonly stopWhen?: Effect.Effect<string>
}): Effect.Effect<void, HarnessError | StateError> => {
  const { capture, log, reporter } = options
  const logOut = makeLineRedactor(options.redact)
  const logErr = makeLineRedactor(options.redact)
  const timeout = Duration.millis(options.inactivityTimeoutMs)
  return options.harness.run(options.request).pipe(
    Stream.timeoutFail(() => new InactivityTimeout(), timeout),
    // A guard stops the agent the same way as the inactivity timeout: the stream ends, the process group is stopped.
    Stream.interruptWhen(
      options.stopWhen === undefined ? Effect.never : Effect.flatMap(options.stopWhen, (reason) => Effect.fail(new GuardStopped(reason)))
    ),
    Stream.runForEach((event) => {
      switch (event._tag) {
        case "Output": {
          const isErr = event.stream === "stderr"
          ;(isErr ? capture.stderr : capture.stdout).append(event.text)
          const text = (isErr ? logErr : logOut).push(event.text)
          return text === "" ? Effect.void : log.write(isErr ? text.replace(/^(?=.)/gm, "[stderr] ") : text)
        }
        case "Display":
          if (!options.stream || event.text === "") return Effect.void
          capture.displayAtLineStart = event.text.endsWith("\n")
          return reporter.write(event.text)
        case "AgentText":
          return Effect.sync(() => capture.judge.feed(event.text))
        case "Usage":
          return Effect.suspend(() => {
            const usage = addUsage(capture.usage, event.usage)
            capture.usage = usage
            return options.onUsage === undefined ? Effect.void : options.onUsage(usage)
          })
        case "Warning":
          return Effect.sync(() => void capture.warnings.push(event.message))
        case "Failed":
          return Effect.sync(() => void (capture.error ??= event.message))
        case "Limited":
          return Effect.sync(() => void (capture.limited = event))
        case "Exited":
          return Effect.sync(() => {
            capture.exitCode = event.exitCode
            capture.signal = event.signal
          })
      }
    }),
    Effect.catchIf((error): error is InactivityTimeout => error instanceof InactivityTimeout, () =>
      Effect.sync(() => {
        capture.timedOut = true
        capture.warnings.push(`the harness printed nothing for ${Duration.format(timeout)} and was stopped`)
      })),
    Effect.catchIf((error): error is GuardStopped => error instanceof GuardStopped, (stop) =>
      Effect.sync(() => void (capture.stopped = stop.reason))),
    Effect.ensuring(
      Effect.suspend(() => {
        const rest = logOut.flush() + logErr.flush().replace(/^(?=.)/gm, "[stderr] ")
        return rest === "" ? Effect.void : log.write(rest).pipe(Effect.ignore)
      })
    )
  )
}
