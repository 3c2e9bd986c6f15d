/** Judging the agent's text line by line: a whole line, a promise whose tags span lines, a line too long to keep. */
import { judgeOccurrence } from "./CompletionRule.js"
import type { JudgeState } from "./JudgeState.js"
import { addToFence, closeFence, keyOf, record, settle } from "./JudgeVerdicts.js"

/** One whole non-blank line, normalised. */
export const judgeLine = (state: JudgeState, line: string, raw: string) => {
  const { FENCE, echoKey, normalizeLine } = state.lineText
  const { token } = state
  settle(state, raw)
  const fenceMatch = FENCE.exec(line)
  const fence = state.fence
  if (fence !== null) {
    // Stryker disable next-line MethodExpression: normalizeLine trims the end of the line, so the info string is never whitespace only
    if (fenceMatch !== null && fenceMatch[1]![0] === fence.marker[0] && fenceMatch[1]!.length >= fence.marker.length && fenceMatch[2]!.trim() === "") {
      closeFence(state, fence)
      state.fence = null
    } else {
      const found = judgeOccurrence(line, token, null, state.tag)
      // Stryker disable next-line MethodExpression: two occurrences or more make more than one verdict, so the block holds more than the promise either way
      if (found.length === 0 || !found.every((f) => f.bare)) fence.onlyPromise = false
      for (const f of found) addToFence(state, fence, f)
    }
  } else if (fenceMatch !== null) {
    state.fence = { marker: fenceMatch[1]!, before: state.previousRaw === null ? null : normalizeLine(state.previousRaw), onlyPromise: true, more: 0, verdicts: [] }
  } else {
    const found = judgeOccurrence(line, token, state.previousRaw === null ? null : normalizeLine(state.previousRaw), state.tag)
    if (found.length > 0) state.pending = { key: echoKey(line), previousKey: keyOf(state, state.previousRaw), verdicts: found.map((f) => f.verdict) }
  }
  state.previousRaw = raw
}

/** A line that holds neither a promise nor a fence. */
const passLine = (state: JudgeState, raw: string) => {
  settle(state, raw)
  if (state.fence !== null) state.fence.onlyPromise = false
  state.previousRaw = raw
}

export const onLine = (state: JudgeState, raw: string) => {
  const { FENCE_LINE, LINE_WINDOW, MAX_PROMISE_LINES, NON_BLANK, PROMISE_WORD, UNCLOSED, normalizeLine } = state.lineText
  const openPromise = state.openPromise
  if (openPromise !== null) {
    // A promise whose tags span lines (`<promise>\nCOMPLETE\n</promise>`) is judged as one line.
    const line = normalizeLine(raw).trim()
    if (line === "") return
    openPromise.text += ` ${line}`
    openPromise.lines++
    if (openPromise.lines < MAX_PROMISE_LINES && openPromise.text.length < LINE_WINDOW && UNCLOSED.test(openPromise.text)) return
    const joined = openPromise.text
    state.openPromise = null
    return judgeLine(state, joined, joined)
  }
  if (!NON_BLANK.test(raw)) return
  if (!PROMISE_WORD.test(raw) && !FENCE_LINE.test(raw)) return passLine(state, raw)
  const line = normalizeLine(raw)
  if (line.length < LINE_WINDOW && UNCLOSED.test(line)) {
    state.openPromise = { text: line, lines: 1 }
    return
  }
  judgeLine(state, line, raw)
}

/**
 * A line too long to keep: occurrences in all but its last `LINE_WINDOW` characters are judged
 * now, each with the context at hand; the tail is kept, after a marker standing for the words
 * before it.
 */
export const compact = (state: JudgeState) => {
  const { LINE_WINDOW, MID_LINE, NON_BLANK, normalizeLine, normalizeText } = state.lineText
  const { partial } = state
  const cut = partial.length - LINE_WINDOW
  // A line of whitespace alone stays blank, however it came in: its tail is kept, and nothing is judged.
  if (!NON_BLANK.test(partial)) {
    state.partial = partial.slice(cut)
    return
  }
  const lineStart = !partial.startsWith(MID_LINE)
  settle(state, partial)
  if (state.fence !== null) state.fence.onlyPromise = false
  // One pass over the whole kept line: occurrences starting before the cut are judged now.
  const line = normalizeText(partial)
  const judgedBefore = normalizeText(partial.slice(0, cut)).length
  const previous = lineStart && state.previousRaw !== null ? normalizeLine(state.previousRaw) : null
  for (const found of judgeOccurrence(line, state.token, previous, state.tag)) {
    if (found.offset >= judgedBefore) break
    if (state.fence === null) record(state, found.verdict)
    else addToFence(state, state.fence, found)
  }
  state.partial = `${MID_LINE}${partial.slice(cut)}`
}
