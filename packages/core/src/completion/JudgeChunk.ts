/** Feeding the judge text: a chunk split into lines, the common chunk of ordinary lines passed over cheaply. */
import { compact, onLine } from "./JudgeLine.js"
import type { JudgeState } from "./JudgeState.js"
import { settle } from "./JudgeVerdicts.js"

/** A chunk that cannot hold a promise or a fence, at a line start: only its first and last lines matter. */
const passChunk = (state: JudgeState, text: string) => {
  const { NON_BLANK, lastBreak } = state.lineText
  // Stryker disable next-line ArithmeticOperator: searching from past the end finds the same last line break
  const last = lastBreak(text, text.length - 1)
  // Stryker disable next-line ConditionalExpression: settling with nothing pending does nothing
  if (state.pending !== null) {
    const firstLine = /^\s*(\S[^\r\n]*)/.exec(text.slice(0, last))
    if (firstLine !== null) settle(state, firstLine[1]!)
  }
  let end = last
  while (end > 0) {
    const start = lastBreak(text, end - 1) + 1
    const line = text.slice(start, end)
    if (NON_BLANK.test(line)) {
      state.previousRaw = line
      if (state.fence !== null) state.fence.onlyPromise = false
      break
    }
    end = start - 1
  }
  state.partial = text.slice(last + 1)
}

/** Splits text into lines; the part after the last line break is kept for the next chunk. */
const splitLines = (state: JudgeState, text: string) => {
  const breaks = /\r\n|\r|\n/g
  let start = 0
  for (let match = breaks.exec(text); match !== null; match = breaks.exec(text)) {
    // A "\r" at the very end may be the first half of "\r\n": wait for the next chunk.
    // Stryker disable next-line StringLiteral,ArithmeticOperator: a \r ending a chunk then ends its line as \r\n would; the \n after it ends a blank line, and blank lines are skipped
    if (match[0] === "\r" && match.index === text.length - 1) break
    onLine(state, text.slice(start, match.index))
    start = match.index + match[0].length
  }
  state.partial = text.slice(start)
  if (state.partial.length > state.lineText.MAX_LINE) compact(state)
}

/** Feeds the next chunk of the agent's own text. */
export const feed = (state: JudgeState, text: string) => {
  const { mayHoldPromise, mayOpenFence } = state.lineText
  if (text === "") return
  // Stryker disable next-line StringLiteral: the first line is then finished apart and the rest read as before; onLine and passChunk judge lines alike (speed only)
  if (state.partial !== "" || state.openPromise !== null) {
    // Finish the line in progress first; the rest of the chunk then starts at a line start.
    const first = /\r\n|\r|\n/.exec(text)
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,ArithmeticOperator,StringLiteral: a \r ending a chunk then ends its line as \r\n would, the \n after it ending a blank line (skipped); other chunks are split alike either way
    if (first === null || state.partial.endsWith("\r") || (first[0] === "\r" && first.index === text.length - 1)) {
      return splitLines(state, state.partial + text)
    }
    const line = state.partial + text.slice(0, first.index)
    // Stryker disable next-line StringLiteral: the line in progress is set again (by passChunk or splitLines) before it is next read
    state.partial = ""
    onLine(state, line)
    text = text.slice(first.index + first[0].length)
  }
  // The common case, kept cheap: a chunk of ordinary lines (no promise, no fence).
  // Stryker disable next-line MethodExpression,StringLiteral,BlockStatement: splitLines judges lines as passChunk does, and a \r ending a chunk ends its line either way (the \n after it ends a blank line, skipped)
  if (state.openPromise === null && !text.endsWith("\r") && /[\r\n]/.test(text) && !mayHoldPromise(text) && !mayOpenFence(text)) {
    return passChunk(state, text)
  }
  splitLines(state, text)
}
