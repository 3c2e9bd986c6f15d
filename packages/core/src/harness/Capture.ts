import { type CompletionJudgement, makeCompletionJudge } from "../completion/CompletionJudge.js"
import type { HarnessUsage } from "../domain/Domain.js"
import type { HarnessEvent } from "./HarnessService.js"
import { makeByteHeadTail } from "../output/HeadTail.js"
import { makeTextTail } from "../output/TextTail.js"

/** How much of each stream an error journal entry keeps: this much from the start and from the end. */
export const JOURNAL_STREAM_HALF = 128 * 1024

/** How much of the agent's own text is kept from its end: its closing message, a reviewer's findings. */
export const SAID_TAIL = 16 * 1024

/** What judges the agent's own text as it streams (the completion judge, a reviewer's verdict judge). */
export interface TextJudge<J> {
  readonly feed: (text: string) => void
  readonly feedBytes: (bytes: Uint8Array) => void
  readonly judgement: () => J
}

/**
 * Everything one agent run reported, gathered as it streams, in bounded memory; `judge` reads the
 * agent's own text. With `keepSaid`, the end of that text is kept too (a copy of each chunk's end:
 * only where a review reads it).
 */
export const makeCaptureOf = <J>(judge: TextJudge<J>, keepSaid: boolean) => {
  const said = makeTextTail(keepSaid ? SAID_TAIL : 0)
  return {
    judge: keepSaid
      ? {
        feed: (text: string) => {
          judge.feed(text)
          said.feed(text)
        },
        feedBytes: (bytes: Uint8Array) => {
          judge.feedBytes(bytes)
          said.feedBytes(bytes)
        },
        judgement: judge.judgement
      } satisfies TextJudge<J>
      : judge,
    /** The end of what the agent said (its own text, as the judge read it); empty unless kept. */
    said,
    exitCode: null as number | null,
    signal: null as string | null,
    timedOut: false,
    /** Why a guard stopped the agent run (a spend cap), if one did. */
    stopped: null as string | null,
    usage: null as HarnessUsage | null,
    /** The failure the agent reported (`Failed`), the first one kept. */
    error: null as string | null,
    /** The usage limit the agent hit (`Limited`), the last one kept. */
    limited: null as Extract<HarnessEvent, { _tag: "Limited" }> | null,
    warnings: [] as Array<string>,
    stdout: makeByteHeadTail(JOURNAL_STREAM_HALF),
    stderr: makeByteHeadTail(JOURNAL_STREAM_HALF),
    displayAtLineStart: true
  }
}
export type CaptureOf<J> = ReturnType<typeof makeCaptureOf<J>>

/**
 * The capture of a loop agent's run: its text judged for the completion promise; `echoReference` is
 * the prompt an echo is recognised against; `keepSaid` where a review reads its closing message.
 */
export const makeCapture = (completionPromise: string, echoReference: string, keepSaid = false) =>
  makeCaptureOf(makeCompletionJudge({ token: completionPromise, prompt: echoReference }), keepSaid)
export type Capture = CaptureOf<CompletionJudgement>
