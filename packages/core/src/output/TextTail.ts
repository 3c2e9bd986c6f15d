/**
 * The last `limit` bytes of a stream of text, in bounded memory: what an agent said last (its
 * closing message, a reviewer's findings). Bytes fed are copied (the caller may reuse them). A
 * limit of 0 keeps nothing, at no cost.
 */
export const makeTextTail = (limit: number) => {
  const encoder = new TextEncoder()
  let pieces: Array<Uint8Array> = []
  let size = 0
  const push = (bytes: Uint8Array, copy: boolean) => {
    if (limit === 0 || bytes.length === 0) return
    const piece = bytes.length > limit ? bytes.slice(bytes.length - limit) : copy ? bytes.slice() : bytes
    pieces.push(piece)
    size += piece.length
    let drop = 0
    while (size - pieces[drop]!.length >= limit) size -= pieces[drop++]!.length
    if (drop > 0) pieces = pieces.slice(drop)
  }
  return {
    feed: (text: string) => push(encoder.encode(text), false),
    feedBytes: (bytes: Uint8Array) => push(bytes, true),
    /** The bytes held: less than `limit` plus the oldest piece kept, however much was fed. */
    held: (): number => size,
    /** The text kept: at most `limit` bytes from the end, starting at a whole character. */
    text: (): string => {
      const all = new Uint8Array(size)
      let at = 0
      for (const piece of pieces) {
        all.set(piece, at)
        at += piece.length
      }
      let start = Math.max(0, size - limit)
      // A character cut at the start (here, or when a long chunk was kept from its end) is left out
      // whole: its continuation bytes are 10xxxxxx, and text never starts with one.
      while (start < size && (all[start]! & 0xc0) === 0x80) start++
      return new TextDecoder().decode(all.subarray(start))
    }
  }
}

export type TextTail = ReturnType<typeof makeTextTail>
