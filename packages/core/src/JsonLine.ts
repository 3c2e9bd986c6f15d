import { Either, Option, Schema } from "effect"

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

/**
 * The meaning of a long line: decoded from its compact text (`compactJsonLine`), or from its whole
 * text when `needsWhole` says the cut strings matter (the agent's own text) or it was not JSON.
 */
export const readLongLine = <D>(bytes: Uint8Array, decode: (text: string) => D, needsWhole: (decoded: D) => boolean): D => {
  const compact = decode(compactJsonLine(bytes).replace(/\r$/, ""))
  return needsWhole(compact) ? decode(new TextDecoder().decode(bytes).replace(/\r$/, "")) : compact
}

/**
 * What a stdout line of a JSON harness is:
 * - `Event`: an event the harness understands
 * - `Ignored`: a JSON event of another type, or of an unexpected shape
 * - `Plain`: not a JSON event at all; shown as it is
 */
export type DecodedLine<E> =
  | { readonly _tag: "Event"; readonly event: E }
  | { readonly _tag: "Ignored" }
  | { readonly _tag: "Plain"; readonly text: string }

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())

const isEventObject = (value: unknown): boolean =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"

/** Reads one line of a JSON-events stream (`{"type": ...}` per line) against the events `schema` knows. */
export const makeLineDecoder = <E, I>(schema: Schema.Schema<E, I>) => {
  const decodeEvent = Schema.decodeUnknownOption(schema)
  return (line: string): DecodedLine<E> => {
    const json = parseJson(line)
    if (Either.isLeft(json) || !isEventObject(json.right)) return { _tag: "Plain", text: line }
    return Option.match(decodeEvent(json.right), {
      onNone: () => ({ _tag: "Ignored" }),
      onSome: (event) => ({ _tag: "Event", event })
    })
  }
}
