import { indexOf } from "./ByteSearch.js"
import { makeLineCompactor } from "./JsonCompact.js"
/**
 * What the buffer gives back: a whole line as text; a long one as its bytes (for the caller to
 * read only what it needs of it), or, for a JSON-lines reader, as its compact text (its strings
 * cut: `makeLineCompactor`); or notice that one was longer than the limit and dropped.
 */
export type BufferedLine =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "Long"; readonly bytes: Uint8Array }
  | { readonly _tag: "Compact"; readonly text: string; readonly length: number }
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

/** How a JSON-lines reader reads its long lines: compacted as they come, unless their start says they must be kept whole. */
export interface LongLines {
  /** True when a line starting with `head` (its first `longAbove` bytes) must be read whole (the agent's own text). */
  readonly wholeIf: (head: string) => boolean
  /** How much of each string a compacted line keeps. */
  readonly keep?: number
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
export const makeLineBuffer = (
  maxLength: number = MAX_LINE_LENGTH,
  longAbove: number = LONG_LINE,
  longLines?: LongLines
): LineBuffer => {
  const decoder = new TextDecoder()
  let pending: Array<Uint8Array> = []
  let pendingLength = 0
  // Length of the line being discarded, or -1 while keeping.
  let discarded = -1
  // A long line being compacted as it comes (its pieces are not kept).
  let compactor: ReturnType<typeof makeLineCompactor> | null = null

  const reset = () => {
    pending = []
    pendingLength = 0
    discarded = -1
    compactor = null
  }

  const take = (piece: Uint8Array, out: Array<BufferedLine>) => {
    const length = pendingLength + piece.length
    if (discarded >= 0) {
      out.push({ _tag: "TooLong", length: discarded + piece.length })
    } else if (compactor !== null) {
      compactor.push(piece)
      out.push({ _tag: "Compact", text: compactor.finish(), length })
    } else if (length > maxLength) {
      out.push({ _tag: "TooLong", length })
    } else {
      const bytes = concat(piece.length > 0 ? [...pending, piece] : pending, length)
      out.push(length > longAbove ? { _tag: "Long", bytes: bytes.slice() } : { _tag: "Line", text: decoder.decode(bytes) })
    }
    reset()
  }

  /** A line grown past `longAbove`: compacted from now on, unless its start says to keep it whole. */
  const startCompacting = () => {
    if (longLines === undefined || longLines.wholeIf(new TextDecoder().decode(concat(pending, pendingLength)))) return
    compactor = makeLineCompactor(longLines.keep)
    for (const part of pending) compactor.push(part)
    pending = []
  }

  const compact = (piece: Uint8Array) => {
    pendingLength += piece.length
    compactor!.push(piece)
    if (compactor!.size() <= maxLength) return
    discarded = pendingLength
    compactor = null
  }

  const keep = (piece: Uint8Array) => {
    if (piece.length === 0) return
    if (discarded >= 0) {
      discarded += piece.length
      return
    }
    if (compactor !== null) return compact(piece)
    if (longLines !== undefined && pendingLength <= longAbove && pendingLength + piece.length > longAbove) {
      // The line just grew long: its first bytes decide how it is read.
      const head = piece.subarray(0, longAbove + 1 - pendingLength)
      pending.push(head.slice())
      pendingLength += head.length
      piece = piece.subarray(head.length)
      startCompacting()
      if (compactor !== null) return piece.length === 0 ? undefined : compact(piece)
      if (piece.length === 0) return
    }
    if (pendingLength + piece.length > maxLength) {
      discarded = pendingLength + piece.length
      pending = []
      pendingLength = 0
      return
    }
    // A copy: the batch it came in is not held, and may be reused.
    pending.push(piece.slice())
    pendingLength += piece.length
  }

  return {
    push: (bytes) => {
      const out: Array<BufferedLine> = []
      let start = 0
      let newline = indexOf(bytes, 10)
      while (newline !== -1) {
        take(bytes.subarray(start, newline), out)
        start = newline + 1
        newline = indexOf(bytes, 10, start)
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
