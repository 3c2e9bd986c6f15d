/** How the occurrences judged on a line become verdicts: recorded, set aside as an echo, or kept in a code block. */
import { decideLineBefore, type Occurrence, type Verdict } from "./CompletionRule.js"
import type { JudgeState, OpenFence } from "./JudgeState.js"

export const keyOf = (state: JudgeState, raw: string | null) => {
  const { echoKey, normalizeLine } = state.lineText
  return raw === null ? null : echoKey(normalizeLine(raw))
}

export const record = (state: JudgeState, verdict: Verdict) => {
  const { MAX_VERDICTS } = state.lineText
  const { verdicts } = state
  state.occurrences++
  if (verdict.accepted) state.claimed = true
  if (verdicts.length < MAX_VERDICTS) verdicts.push(verdict)
  else if (verdict.accepted && !verdicts.some((v) => v.accepted)) verdicts[MAX_VERDICTS - 1] = verdict
}

const isEchoPair = (state: JudgeState, a: string | null, b: string | null) => a !== null && b !== null && state.pairs.has(`${a}\u0000${b}`)

/** A line with occurrences waits for the next non-blank line: together they may be an echo. */
export const settle = (state: JudgeState, nextRaw: string | null) => {
  const { pending } = state
  if (pending === null) return
  const echo = isEchoPair(state, pending.previousKey, pending.key) || isEchoPair(state, pending.key, keyOf(state, nextRaw))
  for (const verdict of pending.verdicts) {
    record(state, echo ? { accepted: false, reason: "echo of the prompt", text: verdict.text } : verdict)
  }
  state.pending = null
}

export const addToFence = (state: JudgeState, open: OpenFence, found: Occurrence) => {
  const { MAX_VERDICTS } = state.lineText
  if (open.verdicts.length < MAX_VERDICTS) open.verdicts.push({ verdict: found.verdict, wellFormed: found.wellFormed })
  else open.more++
}

/** A code block is ignored, unless it holds nothing but one well-formed promise. */
export const closeFence = (state: JudgeState, open: OpenFence) => {
  state.occurrences += open.more
  const only = open.onlyPromise && open.more === 0 && open.verdicts.length === 1 && open.verdicts[0]!.wellFormed
  // A block put forward as the format to use (`Here is the required format:`) is an example.
  const example = only ? decideLineBefore(open.before) : null
  for (const { verdict, wellFormed } of open.verdicts) {
    record(
      state,
      example !== null
        ? { accepted: false, reason: example, text: verdict.text }
        : only
        ? { accepted: true, reason: "a code block holding only the promise", text: verdict.text }
        : wellFormed
        ? { accepted: false, reason: "inside a code block", text: verdict.text }
        : verdict
    )
  }
}
