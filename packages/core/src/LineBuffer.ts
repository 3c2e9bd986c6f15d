/**
 * What the buffer gives back: a whole line as text; a long one as its bytes (for the caller to
 * read only what it needs of it); or notice that one was longer than the limit and dropped.
 */
export type BufferedLine =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "Long"; readonly bytes: Uint8Array }
  | { readonly _tag: "TooLong"; readonly length: number }

/** The longest line a JSON harness keeps by default: an event carrying more than this is only logged raw. */
export const MAX_LINE_LENGTH = 8 * 1024 * 1024
/** Lines longer than this (in bytes) come as `Long`: a harness reads them without decoding them whole. */
export const LONG_LINE = 64 * 1024

export interface LineBuffer {
  /** Adds a batch of output; returns the lines it completed, without their `\n` (a trailing `\r` is kept). */
  readonly push: (bytes: Uint8Array) => Array<BufferedLine>
  /** Returns the unterminated last line, if any, and empties the buffer. */
  readonly flush: () => Array<BufferedLine>
}

const concat = (parts: ReadonlyArray<Uint8Array>, length: number): Uint8Array => {
  if (parts.length === 1) return parts[0]!
  const joined = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    joined.set(part, at)
    at += part.length
  }
  return joined
}

/**
 * Splits output arriving in batches of bytes into lines in bounded memory: a line growing past
 * `maxLength` bytes is dropped (reported as `TooLong` once it ends) instead of being buffered
 * without limit. A line is decoded only when it is at most `longAbove` bytes long.
 */
export const makeLineBuffer = (maxLength: number = MAX_LINE_LENGTH, longAbove: number = LONG_LINE): LineBuffer => {
  const decoder = new TextDecoder()
  let pending: Array<Uint8Array> = []
  let pendingLength = 0
  // Length of the line being discarded, or -1 while keeping.
  let discarded = -1

  const take = (piece: Uint8Array, out: Array<BufferedLine>) => {
    const length = pendingLength + piece.length
    if (discarded >= 0) {
      out.push({ _tag: "TooLong", length: discarded + piece.length })
    } else if (length > maxLength) {
      out.push({ _tag: "TooLong", length })
    } else {
      const bytes = concat(piece.length > 0 ? [...pending, piece] : pending, length)
      out.push(length > longAbove ? { _tag: "Long", bytes: bytes.slice() } : { _tag: "Line", text: decoder.decode(bytes) })
    }
    pending = []
    pendingLength = 0
    discarded = -1
  }

  const keep = (piece: Uint8Array) => {
    if (piece.length === 0) return
    if (discarded >= 0) {
      discarded += piece.length
    } else if (pendingLength + piece.length > maxLength) {
      discarded = pendingLength + piece.length
      pending = []
      pendingLength = 0
    } else {
      // A copy: the batch it came in is not held for the sake of a short rest.
      pending.push(piece.slice())
      pendingLength += piece.length
    }
  }

  return {
    push: (bytes) => {
      const out: Array<BufferedLine> = []
      let start = 0
      let newline = bytes.indexOf(10)
      while (newline !== -1) {
        take(bytes.subarray(start, newline), out)
        start = newline + 1
        newline = bytes.indexOf(10, start)
      }
      keep(bytes.subarray(start))
      return out
    },
    flush: () => {
      const out: Array<BufferedLine> = []
      if (pendingLength > 0 || discarded >= 0) take(new Uint8Array(0), out)
      return out
    }
  }
}
