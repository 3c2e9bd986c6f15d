/** What the buffer gives back: a whole line, or notice that one was longer than the limit and dropped. */
export type BufferedLine =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "TooLong"; readonly length: number }

/** The longest line a JSON harness keeps by default: an event carrying more than this is only logged raw. */
export const MAX_LINE_LENGTH = 8 * 1024 * 1024

export interface LineBuffer {
  /** Adds a chunk; returns the lines it completed, without their `\n` (a trailing `\r` is kept). */
  readonly push: (chunk: string) => Array<BufferedLine>
  /** Returns the unterminated last line, if any, and empties the buffer. */
  readonly flush: () => Array<BufferedLine>
}

/**
 * Splits text arriving in chunks into lines in bounded memory: a line growing past `maxLength`
 * is dropped (reported as `TooLong` once it ends) instead of being buffered without limit.
 */
export const makeLineBuffer = (maxLength: number = MAX_LINE_LENGTH): LineBuffer => {
  let pending: Array<string> = []
  let pendingLength = 0
  // Length of the line being discarded, or -1 while keeping.
  let discarded = -1

  const take = (piece: string, out: Array<BufferedLine>) => {
    if (discarded >= 0) {
      out.push({ _tag: "TooLong", length: discarded + piece.length })
    } else if (pendingLength + piece.length > maxLength) {
      out.push({ _tag: "TooLong", length: pendingLength + piece.length })
    } else {
      out.push({ _tag: "Line", text: pending.join("") + piece })
    }
    pending = []
    pendingLength = 0
    discarded = -1
  }

  const keep = (piece: string) => {
    if (piece.length === 0) return
    if (discarded >= 0) {
      discarded += piece.length
    } else if (pendingLength + piece.length > maxLength) {
      discarded = pendingLength + piece.length
      pending = []
      pendingLength = 0
    } else {
      pending.push(piece)
      pendingLength += piece.length
    }
  }

  return {
    push: (chunk) => {
      const out: Array<BufferedLine> = []
      let start = 0
      let newline = chunk.indexOf("\n")
      while (newline !== -1) {
        take(chunk.slice(start, newline), out)
        start = newline + 1
        newline = chunk.indexOf("\n", start)
      }
      keep(chunk.slice(start))
      return out
    },
    flush: () => {
      const out: Array<BufferedLine> = []
      if (pendingLength > 0 || discarded >= 0) take("", out)
      return out
    }
  }
}
