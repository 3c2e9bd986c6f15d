/** Feeding the judge UTF-8 bytes: judged as their text would be, with only what matters decoded. */
import { indexOf, lastIndexOf } from "../bytes/ByteSearch.js"
import { feed } from "./JudgeChunk.js"
import type { JudgeState } from "./JudgeState.js"
import { settle } from "./JudgeVerdicts.js"

/** `passChunk` on bytes of whole lines and a partial last one, with no mark in them: only what it needs is decoded. */
const passBytes = (state: JudgeState, bytes: Uint8Array) => {
  const { NEWLINE, NON_BLANK } = state.lineText
  const { lineDecoder } = state
  const last = lastIndexOf(bytes, NEWLINE)
  // Stryker disable next-line ConditionalExpression: settling with nothing pending does nothing
  if (state.pending !== null) {
    // The first non-blank line settles the pending occurrence.
    for (let start = 0; start < last;) {
      const end = indexOf(bytes, NEWLINE, start)
      const line = /^\s*(\S.*)$/s.exec(lineDecoder.decode(bytes.subarray(start, end)))
      if (line !== null) {
        settle(state, line[1]!)
        break
      }
      start = end + 1
    }
  }
  let end = last
  while (end > 0) {
    const start = lastIndexOf(bytes, NEWLINE, end - 1) + 1
    const line = lineDecoder.decode(bytes.subarray(start, end))
    if (NON_BLANK.test(line)) {
      state.previousRaw = line
      if (state.fence !== null) state.fence.onlyPromise = false
      break
    }
    end = start - 1
  }
  // Kept whole, as passChunk keeps it: the next chunk finishes or compacts it.
  state.partial = state.streamDecoder.decode(bytes.subarray(last + 1), { stream: true })
}

/** Bytes decoded and judged at a time on the text path: text this short is collected young and cheaply. */
const TEXT_WINDOW = 16 * 1024

/**
 * Decodes `bytes` and feeds their text a window at a time. A batch of a MiB decoded whole would be
 * a string of up to 2 MiB, copied again when joined to the line in progress: an agent printing
 * hundreds of MiB that are not lines (or hold marks) would leave the collector hundreds of such
 * strings to find, and the process would hold them meanwhile.
 */
const feedText = (state: JudgeState, bytes: Uint8Array) => {
  for (let start = 0; start < bytes.length; start += TEXT_WINDOW) {
    feed(state, state.streamDecoder.decode(bytes.subarray(start, start + TEXT_WINDOW), { stream: true }))
  }
}

/** Feeds the next chunk of the agent's own text as UTF-8 bytes. */
export const feedBytes = (state: JudgeState, bytes: Uint8Array) => {
  const { NEWLINE, mayMatter } = state.lineText
  const { streamDecoder } = state
  const first = indexOf(bytes, NEWLINE)
  // Stryker disable next-line EqualityOperator,UnaryOperator: the text path judges any chunk as passBytes does, and a chunk taken apart goes line by line where the text path would take it (speed only)
  if (first === -1 || state.openPromise !== null || mayMatter(bytes)) return feedText(state, bytes)
  // The line in progress is finished through the text path; after its line break the decoder holds nothing.
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: bytes up to a line break end with a whole character, so decoding them streaming or not gives the same text
  feed(state, streamDecoder.decode(bytes.subarray(0, first + 1), { stream: true }))
  const rest = bytes.subarray(first + 1)
  // Stryker disable next-line UnaryOperator: passBytes keeps bytes with no line break as the line in progress, as the text path does (speed only)
  if (state.openPromise !== null || indexOf(rest, NEWLINE) === -1) return feedText(state, rest)
  passBytes(state, rest)
}
