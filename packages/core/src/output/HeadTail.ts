import { concat } from "../bytes/ByteConcat.js"

/**
 * Keeps the first and last `half` bytes of a stream, however long it grows, and counts the rest;
 * both are copied into buffers of their own (no decoding until the text is asked for).
 */
export const makeByteHeadTail = (half: number) => {
  const head = new Uint8Array(half)
  let headLength = 0
  // The last bytes after the head, in a ring: `ring[end - 1]` is the newest, `kept` bytes are held.
  const ring = new Uint8Array(half)
  let end = 0
  let kept = 0
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
      // Copied: the batch may be reused.
      const last = bytes.subarray(Math.max(0, bytes.length - half))
      const first = Math.min(last.length, half - end)
      ring.set(last.subarray(0, first), end)
      ring.set(last.subarray(first), 0)
      end = (end + last.length) % half
      kept = Math.min(half, kept + last.length)
    },
    /** The whole stream if it fit, else head, a marker saying how much was cut (and where to find it all, when somewhere), and tail. */
    text: (whereFull: string | null) => {
      const from = (end - kept + half) % half
      const tail = from + kept <= half ? ring.subarray(from, from + kept) : concat([ring.subarray(from), ring.subarray(0, end)])
      const cut = total - headLength - kept
      if (cut <= 0) return decode(concat([head.subarray(0, headLength), tail]))
      const where = whereFull === null ? "" : `; the full output is in ${whereFull}`
      return `${decode(head.subarray(0, headLength))}\n[... ${cut} bytes cut here${where} ...]\n${decode(tail)}`
    }
  }
}
