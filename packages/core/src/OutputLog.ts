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

/** How many bytes at the end of `bytes` begin a UTF-8 character that continues past it (0 to 3). */
export const incompleteTail = (bytes: Uint8Array): number => {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!
    if ((byte & 0xc0) === 0x80) continue
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return needs > back ? back : 0
  }
  return 0
}

const encoder = new TextEncoder()

const concat = (parts: ReadonlyArray<Uint8Array>, into?: Uint8Array): Uint8Array => {
  let length = 0
  for (const part of parts) length += part.length
  const joined = into !== undefined && into.length >= length ? into.subarray(0, length) : new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    joined.set(part, at)
    at += part.length
  }
  return joined
}

/**
 * Joins pieces to write as one buffer, in one of two buffers it reuses in turn: what it returns
 * stays valid until the call after next (one log write may still be under way while the next
 * batch is joined).
 */
export const makePieceJoiner = () => {
  const scratch: Array<Uint8Array> = [new Uint8Array(0), new Uint8Array(0)]
  let turn = 0
  return (pieces: ReadonlyArray<Uint8Array | string>): Uint8Array => {
    const parts = pieces.map((piece) => typeof piece === "string" ? encoder.encode(piece) : piece)
    if (parts.length === 1) return parts[0]!
    turn = 1 - turn
    const joined = concat(parts, scratch[turn])
    if (joined.buffer !== scratch[turn]!.buffer) scratch[turn] = joined
    return joined
  }
}

/**
 * Keeps the first and last `half` bytes of a stream, however long it grows, and counts the rest;
 * the tail holds the batches themselves (no copy, no decoding until the text is asked for).
 */
export const makeByteHeadTail = (half: number) => {
  const head = new Uint8Array(half)
  let headLength = 0
  let tail: Array<Uint8Array> = []
  let tailLength = 0
  let total = 0
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
  return {
    append: (bytes: Uint8Array) => {
      total += bytes.length
      if (headLength < half) {
        const taken = Math.min(half - headLength, bytes.length)
        head.set(bytes.subarray(0, taken), headLength)
        headLength += taken
        bytes = bytes.subarray(taken)
      }
      if (bytes.length === 0) return
      tail.push(bytes)
      tailLength += bytes.length
      while (tail.length > 1 && tailLength - tail[0]!.length >= half) tailLength -= tail.shift()!.length
      if (tail.length > 64) tail = [concat(tail)]
    },
    /** The whole stream if it fit, else head, a marker saying how much was cut (and where to find it all), and tail. */
    text: (whereFull: string) => {
      const rest = concat(tail)
      const kept = rest.subarray(Math.max(0, rest.length - half))
      const cut = total - headLength - kept.length
      const start = decode(head.subarray(0, headLength))
      if (cut <= 0) return decode(concat([head.subarray(0, headLength), kept]))
      return `${start}\n[... ${cut} bytes cut here; the full output is in ${whereFull} ...]\n${decode(kept)}`
    }
  }
}
