import { incompleteTail } from "../bytes/Utf8Tail.js"

/** The longest line redacted as one piece: a longer line is redacted in pieces of this length. */
export const MAX_REDACTED_LINE = 64 * 1024

/**
 * What the iteration log gets of one output stream. Secrets are redacted in whole lines, so one
 * split across two batches is still caught; lines that held none are written as the bytes that
 * came, never encoded again. `push` takes a batch with its decoded text (decoded as a stream, so a
 * character split across batches comes whole in the later text) and returns what to write.
 */
export interface OutputLog {
  readonly push: (bytes: Uint8Array, text: string) => Array<Uint8Array | string>
  /** The unterminated last line, redacted. */
  readonly flush: () => Array<Uint8Array | string>
}

/** `label` marks each line (`[stderr] `); a labelled stream is always written as text. */
export const makeOutputLog = (redact: (text: string) => string, label: string | null = null): OutputLog => {
  // The line in progress: its bytes and its text.
  let carry: Array<Uint8Array> = []
  let carryText = ""

  const labelled = (text: string) => label === null ? text : text.replace(/^(?=.)/gm, label)

  /** `window` (the text of `bytes`), redacted; the bytes themselves when nothing was. */
  const written = (window: string, bytes: Array<Uint8Array>): Array<Uint8Array | string> => {
    if (window === "") return bytes
    const redacted = redact(window)
    return redacted === window && label === null ? bytes : [labelled(redacted)]
  }

  return {
    push: (bytes, text) => {
      const newline = bytes.lastIndexOf(10)
      if (newline === -1) {
        if (bytes.length > 0) carry.push(bytes)
        carryText += text
        if (carryText.length < MAX_REDACTED_LINE) return []
        // The first bytes of a character the text does not hold yet stay for the next piece.
        const last = carry[carry.length - 1]!
        const keep = incompleteTail(last)
        const out = written(carryText, [...carry.slice(0, -1), last.subarray(0, last.length - keep)])
        carry = keep > 0 ? [last.subarray(last.length - keep)] : []
        carryText = ""
        return out
      }
      const cut = text.lastIndexOf("\n") + 1
      const out = written(carryText + text.slice(0, cut), [...carry, bytes.subarray(0, newline + 1)])
      carry = newline + 1 < bytes.length ? [bytes.subarray(newline + 1)] : []
      carryText = text.slice(cut)
      return out
    },
    flush: () => {
      const out = written(carryText, carry)
      carry = []
      carryText = ""
      return out
    }
  }
}
