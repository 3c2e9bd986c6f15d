import type { Verdict } from "./CompletionRule.js"
import { type LineText, makeLineText } from "./LineText.js"

/** A line with occurrences, waiting for the next non-blank line: together they may be an echo. */
export interface PendingLine {
  readonly key: string
  readonly previousKey: string | null
  readonly verdicts: ReadonlyArray<Verdict>
}

export interface OpenFence {
  readonly marker: string
  /** The non-blank line before the block, normalised: it may put the block forward as an example. */
  readonly before: string | null
  onlyPromise: boolean
  /** Occurrences past the first `MAX_VERDICTS`, counted only. */
  more: number
  readonly verdicts: Array<{ readonly verdict: Verdict; readonly wellFormed: boolean }>
}

/** What one judge keeps between chunks: the verdicts so far, and where it is in the agent's text. */
export interface JudgeState {
  readonly lineText: LineText
  readonly token: string
  /** The marker's tag name: `promise`, or a reviewer's `verdict`. */
  readonly tag: string
  /** The prompt's consecutive lines, as pairs: an output pair found here is an echo. */
  readonly pairs: Set<string>
  readonly verdicts: Array<Verdict>
  occurrences: number
  claimed: boolean
  /** The line in progress: the text after the last line break fed. */
  partial: string
  /** The previous non-blank line as it came (normalised only when a promise needs it). */
  previousRaw: string | null
  pending: PendingLine | null
  fence: OpenFence | null
  /** A line whose `<promise>` is still open, with how many lines it spans so far. */
  openPromise: { text: string; lines: number } | null
  readonly streamDecoder: InstanceType<typeof TextDecoder>
  readonly lineDecoder: InstanceType<typeof TextDecoder>
}

export const makeJudgeState = (token: string, prompt: string, tag = "promise"): JudgeState => {
  const lineText = makeLineText(tag)
  return {
    lineText,
    token,
    tag,
    pairs: lineText.promptPairs(prompt),
    verdicts: [],
    occurrences: 0,
    claimed: false,
    partial: "",
    previousRaw: null,
    pending: null,
    fence: null,
    openPromise: null,
    streamDecoder: new TextDecoder(),
    lineDecoder: new TextDecoder()
  }
}
