/**
 * The one rule that decides whether the agent claimed completion, applied to what the agent itself
 * says (harnesses report it as `AgentText`: never stderr, tool input or output, or thinking), chunk
 * by chunk, in bounded memory.
 *
 * 1. Normalise each line: strip ANSI escapes, decode `&lt;` `&gt;` `&amp;`; tags and token are
 *    compared case-insensitively with any whitespace inside the tags (newlines too).
 * 2. Two or more consecutive lines that reproduce two or more consecutive lines of the prompt are an
 *    echo: a promise inside them is ignored.
 * 3. A fenced code block is ignored, unless it holds nothing but the promise; then it is judged as
 *    a promise alone on its line, by the line before the block (`for example:` makes it a mention).
 * 4. A promise counts when it stands as the agent's statement: alone on its line (unless the line
 *    before ends with `:` and defers, negates, defines or quotes it), after a finished sentence,
 *    or after a label (`Status:`) that does none of those; followed by nothing, punctuation,
 *    markdown, emoji or a new sentence that does not defer it. A mention inside a sentence never
 *    counts.
 * 5. Any one claim completes the iteration.
 */
import type { Verdict } from "./CompletionRule.js"
import { feedBytes } from "./JudgeBytes.js"
import { feed } from "./JudgeChunk.js"
import { judgeLine, onLine } from "./JudgeLine.js"
import { type JudgeState, makeJudgeState } from "./JudgeState.js"
import { closeFence, settle } from "./JudgeVerdicts.js"

export type { Verdict } from "./CompletionRule.js"

/** What one iteration's agent text amounts to. */
export interface CompletionJudgement {
  /** At least one occurrence is a real claim. */
  readonly claimed: boolean
  /** Every occurrence of the promise tag, in order (at most `MAX_VERDICTS`, claims kept first). */
  readonly verdicts: ReadonlyArray<Verdict>
  /** Occurrences judged, including those left out of `verdicts`. */
  readonly occurrences: number
}

export interface CompletionJudge {
  /** Feeds the next chunk of the agent's own text. */
  readonly feed: (text: string) => void
  /**
   * Feeds the next chunk of the agent's own text as UTF-8 bytes (a character may be split across
   * chunks): judged exactly as `feed` of the decoded text would be, but a chunk with no `<`, `&`,
   * fence or carriage return has only its first and last lines decoded. A judge is fed either
   * text or bytes; no reference to `bytes` is kept.
   */
  readonly feedBytes: (bytes: Uint8Array) => void
  /** Judges what is still pending (the last line) and returns the judgement; feeding more after it is allowed. */
  readonly judgement: () => CompletionJudgement
}

export interface CompletionJudgeOptions {
  /** The token inside `<promise>…</promise>`. */
  readonly token: string
  /** The text an echo is recognised against: this iteration's prompt. */
  readonly prompt: string
  /** The marker's tag name, a plain word: `promise` unless said (a reviewer's is `verdict`). */
  readonly tag?: string
}

/** Judges what is still pending (the undecoded bytes, the last line, an open promise or code block) and returns the judgement. */
const judgeWhatIsLeft = (state: JudgeState): CompletionJudgement => {
  const undecoded = state.streamDecoder.decode()
  // Stryker disable next-line StringLiteral: feeding an empty string does nothing
  if (undecoded !== "") feed(state, undecoded)
  // Stryker disable next-line StringLiteral: an empty line in progress is blank, and blank lines (inside a split promise too) are skipped
  if (state.partial !== "") {
    const rest = state.partial
    state.partial = ""
    onLine(state, rest)
  }
  if (state.openPromise !== null) {
    const joined = state.openPromise.text
    state.openPromise = null
    judgeLine(state, joined, joined)
  }
  settle(state, null)
  if (state.fence !== null) {
    closeFence(state, state.fence)
    state.fence = null
  }
  return { claimed: state.claimed, verdicts: [...state.verdicts], occurrences: state.occurrences }
}

export const makeCompletionJudge = (options: CompletionJudgeOptions): CompletionJudge => {
  const state = makeJudgeState(options.token, options.prompt, options.tag)
  return {
    feed: (text) => feed(state, text),
    feedBytes: (bytes) => feedBytes(state, bytes),
    judgement: () => judgeWhatIsLeft(state)
  }
}

/** The judgement of a whole text. */
export const judgeCompletion = (text: string, options: CompletionJudgeOptions): CompletionJudgement => {
  const judge = makeCompletionJudge(options)
  judge.feed(text)
  return judge.judgement()
}
