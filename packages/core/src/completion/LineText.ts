import { indexOf } from "../bytes/ByteSearch.js"

/**
 * What the judge makes of a line's text: its patterns and limits, normalising, the keys an echo is
 * found by, and the cheap checks that let most text go by unread.
 */
// The patterns and limits are made for each judge: cheap next to judging a stream, and each test
// that judges text then holds its own.
/** `tag`: the marker's tag name, a plain word (`promise`, `verdict`). */
export const makeLineText = (tag = "promise") => {
  /** Lines longer than this are judged in windows: an occurrence keeps this much context on either side. */
  const LINE_WINDOW = 4096
  const MAX_LINE = 64 * 1024
  const MAX_VERDICTS = 20
  /** An opening tag waits this many non-blank lines for its closing tag. */
  const MAX_PROMISE_LINES = 5

  const ANSI = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g
  /** An opening tag with no tag after it on the line: the promise goes on over the next lines. */
  const UNCLOSED = new RegExp(`<\\s*${tag}\\s*>[^<>]*$`, "i")
  /** A fence and its info string: the rest of the line, whatever it holds (a line separator is only a character to Markdown). */
  const FENCE = /^\s{0,3}(`{3,}|~{3,})(.*)/s
  /** Stands for the words of a long line that were judged and dropped. */
  const MID_LINE = "…"

  const normalizeText = (text: string): string =>
    text.replace(ANSI, "").replace(/&lt;/gi, "<").replace(/&gt;/gi, ">").replace(/&amp;/gi, "&")

  const normalizeLine = (line: string): string => normalizeText(line).trimEnd()

  /** The key of a line for echo matching: whitespace collapsed, long lines cut (their length kept). */
  const echoKey = (line: string) => {
    const flat = line.replace(/\s+/g, " ").trim()
    return flat.length > 400 ? `${flat.slice(0, 400)}…${flat.length}` : flat
  }

  /** Consecutive non-blank prompt lines, as pairs: an output pair found here is an echo. */
  const promptPairs = (prompt: string): Set<string> => {
    const pairs = new Set<string>()
    let previous: string | null = null
    for (const raw of prompt.split(/\r\n|\r|\n/)) {
      const key = echoKey(normalizeLine(raw))
      if (key === "") continue
      if (previous !== null) pairs.add(`${previous}\u0000${key}`)
      previous = key
    }
    return pairs
  }

  /** Text without these holds no promise and opens or closes no code block: it only moves the judge along. */
  const PROMISE_WORD = new RegExp(`(?:<|&lt;)\\s*${tag}`, "i")
  const FENCE_START = /(?:^|[\r\n])[ \t]{0,3}(?:```|~~~)/
  const FENCE_LINE = /^[ \t]{0,3}(?:```|~~~)/
  const NON_BLANK = /\S/
  // Looked for with `includes` before the patterns: most chunks hold neither character.
  // Stryker disable next-line StringLiteral: PROMISE_WORD itself needs a `<` or an `&`; the `includes` checks only spare it a run (speed)
  const mayHoldPromise = (text: string) => (text.includes("<") || text.includes("&")) && PROMISE_WORD.test(text)
  // Stryker disable next-line StringLiteral: FENCE_START itself needs three backticks or tildes; the `includes` checks only spare it a run (speed)
  const mayOpenFence = (text: string) => (text.includes("```") || text.includes("~~~")) && FENCE_START.test(text)

  const NEWLINE = 10
  /** Bytes whose presence sends a chunk of bytes down the text path: a tag, an entity, a carriage return, a fence. */
  const MARK_BYTES = [0x3c, 0x26, 0x0d]
  // Stryker disable next-line ArrayDeclaration: an empty needle is found at once, sending the chunk down the text path, which judges it alike (speed only)
  const FENCE_BYTES = [new Uint8Array([0x60, 0x60, 0x60]), new Uint8Array([0x7e, 0x7e, 0x7e])]
  const mayMatter = (bytes: Uint8Array) =>
    // Stryker disable next-line UnaryOperator: `!== 1` holds for one of three different bytes at least, sending every chunk down the text path, which judges it alike (speed only)
    MARK_BYTES.some((byte) => indexOf(bytes, byte) !== -1) || FENCE_BYTES.some((fence) => indexOf(bytes, fence) !== -1)

  /** The last `\n` or `\r` at or before `from` (-1: none); only the last line is searched for a `\r`. */
  const lastBreak = (text: string, from: number) => {
    const newline = text.lastIndexOf("\n", from)
    for (let i = from; i > newline; i--) if (text.charCodeAt(i) === 13) return i
    return newline
  }

  return {
    LINE_WINDOW,
    MAX_LINE,
    MAX_VERDICTS,
    MAX_PROMISE_LINES,
    UNCLOSED,
    FENCE,
    MID_LINE,
    PROMISE_WORD,
    FENCE_LINE,
    NON_BLANK,
    NEWLINE,
    normalizeText,
    normalizeLine,
    echoKey,
    promptPairs,
    mayHoldPromise,
    mayOpenFence,
    mayMatter,
    lastBreak
  }
}

export type LineText = ReturnType<typeof makeLineText>
