import { makeQuoteScanner, type QuoteScanner } from "./ByteScan.js"

const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Where a cut at `cut` inside a JSON string is safe: not inside an escape, not inside a UTF-8 character. */
const safeCut = (bytes: Uint8Array, start: number, cut: number): number => {
  // The longest escape (`\uXXXX`) is 6 bytes: with no backslash in the 5 before it, the cut splits none.
  for (let back = cut - 1; back >= Math.max(start, cut - 5); back--) {
    if (bytes[back] === BACKSLASH) {
      cut = back
      back = cut
    }
  }
  while (cut > start && (bytes[cut]! & 0xc0) === 0x80) cut--
  return cut
}

/**
 * The text of one JSON line with every string value longer than `keep` bytes cut to its first
 * `keep` bytes: a multi-MiB tool output becomes a short string, so the event can be parsed without
 * decoding or building it. Strings are found by their quotes alone, which is exact for valid JSON;
 * anything else is cut somewhere harmless and then fails to parse as the whole line would.
 */
export const compactJsonLine = (bytes: Uint8Array, keep = 1024): string => {
  const pieces: Array<Uint8Array> = []
  let from = 0
  let open = bytes.indexOf(QUOTE)
  while (open !== -1) {
    let close = bytes.indexOf(QUOTE, open + 1)
    while (close !== -1) {
      let backslashes = 0
      while (bytes[close - 1 - backslashes] === BACKSLASH) backslashes++
      if (backslashes % 2 === 0) break
      close = bytes.indexOf(QUOTE, close + 1)
    }
    if (close === -1) break
    if (close - open - 1 > keep) {
      pieces.push(bytes.subarray(from, safeCut(bytes, open + 1, open + 1 + keep)))
      from = close
    }
    open = bytes.indexOf(QUOTE, close + 1)
  }
  const decoder = new TextDecoder()
  if (pieces.length === 0) return decoder.decode(bytes)
  pieces.push(bytes.subarray(from))
  return pieces.map((piece) => decoder.decode(piece, { stream: true })).join("") + decoder.decode()
}

// One scanner serves every compactor: each uses it only within one `push`.
let quoteScanner: QuoteScanner | null = null
const sharedScanner = () => (quoteScanner ??= makeQuoteScanner())

/**
 * `compactJsonLine` for a line that comes in pieces (the batches of output it spans), in bounded
 * memory: what is outside strings is kept, and the first `keep` bytes of each string. String
 * ends are found by the SIMD quote scan (`ByteScan`), which skips a long string's escaped quotes
 * at once. The pieces need not outlive `push`: what is kept is copied.
 */
export const makeLineCompactor = (keep = 1024) => {
  const scanner = sharedScanner()
  const kept: Array<Uint8Array> = []
  let keptLength = 0
  // The string being read: its first `keep` bytes (and the one after, to cut it between characters),
  // how many of them, and whether it went on past `keep`.
  const string = new Uint8Array(keep + 1)
  let stringLength = 0
  let inString = false
  let cut = false
  // The last bytes pushed: the run of backslashes they end with, and the last two.
  let slashes = 0
  let before: Uint8Array = new Uint8Array(0)

  const keepCopy = (bytes: Uint8Array) => {
    if (bytes.length === 0) return
    kept.push(bytes.slice())
    keptLength += bytes.length
  }

  /** Whether the `"` at `at` ends a string: an even run of backslashes before it, counting the pieces before. */
  const unescaped = (bytes: Uint8Array, at: number) => {
    let run = 0
    while (at - run - 1 >= 0 && bytes[at - run - 1] === BACKSLASH) run++
    if (run === at) run += slashes
    return run % 2 === 0
  }

  const nextQuote = (bytes: Uint8Array, from: number) => {
    for (let at = scanner.find(from); at !== -1; at = scanner.find(at + 1)) if (unescaped(bytes, at)) return at
    return -1
  }

  const closeString = () => {
    keepCopy(string.subarray(0, cut ? safeCut(string, 0, keep) : stringLength))
    inString = false
  }

  return {
    /** The next piece of the line. */
    push: (bytes: Uint8Array) => {
      if (bytes.length === 0) return
      scanner.load(bytes, before)
      let at = 0
      while (at < bytes.length) {
        const quote = nextQuote(bytes, at)
        if (!inString) {
          if (quote === -1) {
            keepCopy(bytes.subarray(at))
            break
          }
          keepCopy(bytes.subarray(at, quote + 1))
          inString = true
          stringLength = 0
          cut = false
          at = quote + 1
          continue
        }
        const end = quote === -1 ? bytes.length : quote
        const room = Math.min(keep + 1 - stringLength, end - at)
        string.set(bytes.subarray(at, at + room), stringLength)
        stringLength += room
        if (stringLength > keep) cut = true
        if (quote === -1) break
        closeString()
        keepCopy(bytes.subarray(quote, quote + 1))
        at = quote + 1
      }
      let run = 0
      while (run < bytes.length && bytes[bytes.length - 1 - run] === BACKSLASH) run++
      slashes = run === bytes.length ? slashes + run : run
      before = bytes.slice(Math.max(0, bytes.length - 2))
    },
    /** How many bytes are kept so far. */
    size: () => keptLength + Math.min(stringLength, keep),
    /** The compact text of the line. */
    finish: (): string => {
      if (inString) closeString()
      const decoder = new TextDecoder()
      return kept.map((piece) => decoder.decode(piece, { stream: true })).join("") + decoder.decode()
    }
  }
}
