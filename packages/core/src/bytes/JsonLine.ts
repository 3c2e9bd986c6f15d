import { Either, Option, Schema } from "effect"
import { compactJsonLine } from "./JsonCompact.js"
import type { BufferedLine } from "./LineBuffer.js"

/**
 * The meaning of a long line: decoded from its compact text (`compactJsonLine`), or from its whole
 * text when `needsWhole` says the cut strings matter (the agent's own text) or it was not JSON.
 */
export const readLongLine = <D>(bytes: Uint8Array, decode: (text: string) => D, needsWhole: (decoded: D) => boolean): D => {
  const compact = decode(compactJsonLine(bytes).replace(/\r$/, ""))
  return needsWhole(compact) ? decode(new TextDecoder().decode(bytes).replace(/\r$/, "")) : compact
}

/** A line as it came from a line buffer, except one too long to keep. */
export type KeptLine = Exclude<BufferedLine, { readonly _tag: "TooLong" }>

/** The text of a kept line (a stderr line, say), its trailing `\r` dropped. */
export const textOfLine = (line: KeptLine): string =>
  (line._tag === "Long" ? new TextDecoder().decode(line.bytes) : line.text).replace(/\r$/, "")

/**
 * The meaning of a kept stdout line of a JSON harness: a short or compacted line from its text,
 * a long one kept whole through `readLongLine`.
 */
export const readKeptLine = <D>(line: KeptLine, decode: (text: string) => D, needsWhole: (decoded: D) => boolean): D =>
  line._tag === "Long" ? readLongLine(line.bytes, decode, needsWhole) : decode(line.text.replace(/\r$/, ""))

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
