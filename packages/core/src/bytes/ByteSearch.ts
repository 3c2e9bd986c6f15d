/**
 * Searching bytes without decoding them. Where the platform has a native search (Node's `Buffer`:
 * `memchr` for a byte, a Boyer-Moore-Horspool search for longer needles) it is used on the bytes in
 * place; elsewhere a plain loop does the same. Output streamed through the loop is searched here
 * for what must be found in it (line breaks, the promise's tag, secret shapes), so most of it is
 * never turned into text.
 */

type Native = {
  readonly indexOf: (this: Uint8Array, value: number | Uint8Array, byteOffset?: number) => number
  readonly lastIndexOf: (this: Uint8Array, value: number | Uint8Array, byteOffset?: number) => number
}

const native: Native | null = (() => {
  const prototype = (globalThis as { Buffer?: { prototype?: Partial<Native> } }).Buffer?.prototype
  return typeof prototype?.indexOf === "function" && typeof prototype.lastIndexOf === "function"
    ? (prototype as Native)
    : null
})()

const loopIndexOf = (bytes: Uint8Array, needle: Uint8Array, from: number): number => {
  const first = needle[0]!
  const last = bytes.length - needle.length
  outer: for (let i = bytes.indexOf(first, from); i !== -1 && i <= last; i = bytes.indexOf(first, i + 1)) {
    for (let j = 1; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer
    return i
  }
  return -1
}

/** The first index at or after `from` where `needle` (a byte, or a sequence of bytes) starts; -1 if none. */
export const indexOf = (bytes: Uint8Array, needle: number | Uint8Array, from = 0): number => {
  if (from >= bytes.length) return -1
  if (native !== null) return native.indexOf.call(bytes, needle, from)
  if (typeof needle === "number") return bytes.indexOf(needle, from)
  return needle.length === 0 ? from : loopIndexOf(bytes, needle, from)
}

/** The last index at or before `from` (default: the end) holding `byte`; -1 if none. */
export const lastIndexOf = (bytes: Uint8Array, byte: number, from = bytes.length - 1): number => {
  if (from < 0 || bytes.length === 0) return -1
  return native !== null ? native.lastIndexOf.call(bytes, byte, from) : bytes.lastIndexOf(byte, from)
}
