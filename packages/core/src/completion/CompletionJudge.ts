/**
 * The one rule that decides whether the agent claimed completion, applied to what the agent itself
 * says (harnesses report it as `AgentText`: never stderr, tool input or output, or thinking), chunk
 * by chunk, in bounded memory.
 *
 * 1. Normalise each line: strip ANSI escapes, decode `&lt;` `&gt;` `&amp;`; tags and token are
 *    compared case-insensitively with any whitespace inside the tags (newlines too).
 * 2. Two or more consecutive lines that reproduce two or more consecutive lines of the prompt are an
 *    echo: a promise inside them is ignored.
 * 3. A fenced code block is ignored, unless it holds nothing but the promise; then it is judged as
 *    a promise alone on its line, by the line before the block (`for example:` makes it a mention).
 * 4. A promise counts when it stands as the agent's statement: alone on its line (unless the line
 *    before ends with `:` and defers, negates, defines or quotes it), after a finished sentence,
 *    or after a label (`Status:`) that does none of those; followed by nothing, punctuation,
 *    markdown, emoji or a new sentence that does not defer it. A mention inside a sentence never
 *    counts.
 * 5. Any one claim completes the iteration.
 */
import { indexOf, lastIndexOf } from "../bytes/ByteSearch.js"
import { decideLineBefore, judgeOccurrence, type Occurrence, type Verdict } from "./CompletionRule.js"

export type { Verdict } from "./CompletionRule.js"

/** What one iteration's agent text amounts to. */
export interface CompletionJudgement {
  /** At least one occurrence is a real claim. */
  readonly claimed: boolean
  /** Every occurrence of the promise tag, in order (at most `MAX_VERDICTS`, claims kept first). */
  readonly verdicts: ReadonlyArray<Verdict>
  /** Occurrences judged, including those left out of `verdicts`. */
  readonly occurrences: number
}

export interface CompletionJudge {
  /** Feeds the next chunk of the agent's own text. */
  readonly feed: (text: string) => void
  /**
   * Feeds the next chunk of the agent's own text as UTF-8 bytes (a character may be split across
   * chunks): judged exactly as `feed` of the decoded text would be, but a chunk with no `<`, `&`,
   * fence or carriage return has only its first and last lines decoded. A judge is fed either
   * text or bytes; no reference to `bytes` is kept.
   */
  readonly feedBytes: (bytes: Uint8Array) => void
  /** Judges what is still pending (the last line) and returns the judgement; feeding more after it is allowed. */
  readonly judgement: () => CompletionJudgement
}

export interface CompletionJudgeOptions {
  /** The token inside `<promise>…</promise>`. */
  readonly token: string
  /** The text an echo is recognised against: this iteration's prompt. */
  readonly prompt: string
}

interface PendingLine {
  readonly key: string
  readonly previousKey: string | null
  readonly verdicts: ReadonlyArray<Verdict>
}

interface OpenFence {
  readonly marker: string
  /** The non-blank line before the block, normalised: it may put the block forward as an example. */
  readonly before: string | null
  onlyPromise: boolean
  /** Occurrences past the first `MAX_VERDICTS`, counted only. */
  more: number
  readonly verdicts: Array<{ readonly verdict: Verdict; readonly wellFormed: boolean }>
}

export const makeCompletionJudge = (options: CompletionJudgeOptions): CompletionJudge => {
  // The patterns and limits are made for each judge: cheap next to judging a stream, and each test
  // that judges text then holds its own.
  /** Lines longer than this are judged in windows: an occurrence keeps this much context on either side. */
  const LINE_WINDOW = 4096
  const MAX_LINE = 64 * 1024
  const MAX_VERDICTS = 20
  /** An opening tag waits this many non-blank lines for its closing tag. */
  const MAX_PROMISE_LINES = 5

  const ANSI = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g
  /** An opening tag with no tag after it on the line: the promise goes on over the next lines. */
  const UNCLOSED = /<\s*promise\s*>[^<>]*$/i
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
  const PROMISE_WORD = /(?:<|&lt;)\s*promise/i
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

  const token = options.token
  const pairs = promptPairs(options.prompt)
  const verdicts: Array<Verdict> = []
  let occurrences = 0
  let claimed = false
  let partial = ""
  /** The previous non-blank line as it came (normalised only when a promise needs it). */
  let previousRaw: string | null = null
  let pending: PendingLine | null = null
  let fence: OpenFence | null = null
  /** A line whose `<promise>` is still open, with how many lines it spans so far. */
  let openPromise: { text: string; lines: number } | null = null

  const keyOf = (raw: string | null) => raw === null ? null : echoKey(normalizeLine(raw))

  const record = (verdict: Verdict) => {
    occurrences++
    if (verdict.accepted) claimed = true
    if (verdicts.length < MAX_VERDICTS) verdicts.push(verdict)
    else if (verdict.accepted && !verdicts.some((v) => v.accepted)) verdicts[MAX_VERDICTS - 1] = verdict
  }

  const isEchoPair = (a: string | null, b: string | null) => a !== null && b !== null && pairs.has(`${a}\u0000${b}`)

  /** A line with occurrences waits for the next non-blank line: together they may be an echo. */
  const settle = (nextRaw: string | null) => {
    if (pending === null) return
    const echo = isEchoPair(pending.previousKey, pending.key) || isEchoPair(pending.key, keyOf(nextRaw))
    for (const verdict of pending.verdicts) {
      record(echo ? { accepted: false, reason: "echo of the prompt", text: verdict.text } : verdict)
    }
    pending = null
  }

  const addToFence = (open: OpenFence, found: Occurrence) => {
    if (open.verdicts.length < MAX_VERDICTS) open.verdicts.push({ verdict: found.verdict, wellFormed: found.wellFormed })
    else open.more++
  }

  /** A code block is ignored, unless it holds nothing but one well-formed promise. */
  const closeFence = (open: OpenFence) => {
    occurrences += open.more
    const only = open.onlyPromise && open.more === 0 && open.verdicts.length === 1 && open.verdicts[0]!.wellFormed
    // A block put forward as the format to use (`Here is the required format:`) is an example.
    const example = only ? decideLineBefore(open.before) : null
    for (const { verdict, wellFormed } of open.verdicts) {
      record(
        example !== null
          ? { accepted: false, reason: example, text: verdict.text }
          : only
          ? { accepted: true, reason: "a code block holding only the promise", text: verdict.text }
          : wellFormed
          ? { accepted: false, reason: "inside a code block", text: verdict.text }
          : verdict
      )
    }
  }

  /** One whole non-blank line, normalised. */
  const judgeLine = (line: string, raw: string) => {
    settle(raw)
    const fenceMatch = FENCE.exec(line)
    if (fence !== null) {
      // Stryker disable next-line MethodExpression: normalizeLine trims the end of the line, so the info string is never whitespace only
      if (fenceMatch !== null && fenceMatch[1]![0] === fence.marker[0] && fenceMatch[1]!.length >= fence.marker.length && fenceMatch[2]!.trim() === "") {
        closeFence(fence)
        fence = null
      } else {
        const found = judgeOccurrence(line, token, null)
        // Stryker disable next-line MethodExpression: two occurrences or more make more than one verdict, so the block holds more than the promise either way
        if (found.length === 0 || !found.every((f) => f.bare)) fence.onlyPromise = false
        for (const f of found) addToFence(fence, f)
      }
    } else if (fenceMatch !== null) {
      fence = { marker: fenceMatch[1]!, before: previousRaw === null ? null : normalizeLine(previousRaw), onlyPromise: true, more: 0, verdicts: [] }
    } else {
      const found = judgeOccurrence(line, token, previousRaw === null ? null : normalizeLine(previousRaw))
      if (found.length > 0) pending = { key: echoKey(line), previousKey: keyOf(previousRaw), verdicts: found.map((f) => f.verdict) }
    }
    previousRaw = raw
  }

  /** A line that holds neither a promise nor a fence. */
  const passLine = (raw: string) => {
    settle(raw)
    if (fence !== null) fence.onlyPromise = false
    previousRaw = raw
  }

  const onLine = (raw: string) => {
    if (openPromise !== null) {
      // A promise whose tags span lines (`<promise>\nCOMPLETE\n</promise>`) is judged as one line.
      const line = normalizeLine(raw).trim()
      if (line === "") return
      openPromise.text += ` ${line}`
      openPromise.lines++
      if (openPromise.lines < MAX_PROMISE_LINES && openPromise.text.length < LINE_WINDOW && UNCLOSED.test(openPromise.text)) return
      const joined = openPromise.text
      openPromise = null
      return judgeLine(joined, joined)
    }
    if (!NON_BLANK.test(raw)) return
    if (!PROMISE_WORD.test(raw) && !FENCE_LINE.test(raw)) return passLine(raw)
    const line = normalizeLine(raw)
    if (line.length < LINE_WINDOW && UNCLOSED.test(line)) {
      openPromise = { text: line, lines: 1 }
      return
    }
    judgeLine(line, raw)
  }

  /**
   * A line too long to keep: occurrences in all but its last `LINE_WINDOW` characters are judged
   * now, each with the context at hand; the tail is kept, after a marker standing for the words
   * before it.
   */
  const compact = () => {
    const cut = partial.length - LINE_WINDOW
    const lineStart = !partial.startsWith(MID_LINE)
    settle(partial)
    if (fence !== null) fence.onlyPromise = false
    // One pass over the whole kept line: occurrences starting before the cut are judged now.
    const line = normalizeText(partial)
    const judgedBefore = normalizeText(partial.slice(0, cut)).length
    const previous = lineStart && previousRaw !== null ? normalizeLine(previousRaw) : null
    for (const found of judgeOccurrence(line, token, previous)) {
      if (found.offset >= judgedBefore) break
      if (fence === null) record(found.verdict)
      else addToFence(fence, found)
    }
    partial = `${MID_LINE}${partial.slice(cut)}`
  }

  /** A chunk that cannot hold a promise or a fence, at a line start: only its first and last lines matter. */
  const passChunk = (text: string) => {
    // Stryker disable next-line ArithmeticOperator: searching from past the end finds the same last line break
    const last = lastBreak(text, text.length - 1)
    // Stryker disable next-line ConditionalExpression: settling with nothing pending does nothing
    if (pending !== null) {
      const firstLine = /^\s*(\S[^\r\n]*)/.exec(text.slice(0, last))
      if (firstLine !== null) settle(firstLine[1]!)
    }
    let end = last
    while (end > 0) {
      const start = lastBreak(text, end - 1) + 1
      const line = text.slice(start, end)
      if (NON_BLANK.test(line)) {
        previousRaw = line
        if (fence !== null) fence.onlyPromise = false
        break
      }
      end = start - 1
    }
    partial = text.slice(last + 1)
  }

  /** Splits text into lines; the part after the last line break is kept for the next chunk. */
  const splitLines = (text: string) => {
    const breaks = /\r\n|\r|\n/g
    let start = 0
    for (let match = breaks.exec(text); match !== null; match = breaks.exec(text)) {
      // A "\r" at the very end may be the first half of "\r\n": wait for the next chunk.
      // Stryker disable next-line StringLiteral,ArithmeticOperator: a \r ending a chunk then ends its line as \r\n would; the \n after it ends a blank line, and blank lines are skipped
      if (match[0] === "\r" && match.index === text.length - 1) break
      onLine(text.slice(start, match.index))
      start = match.index + match[0].length
    }
    partial = text.slice(start)
    if (partial.length > MAX_LINE) compact()
  }

  const feed = (text: string) => {
    if (text === "") return
    // Stryker disable next-line StringLiteral: the first line is then finished apart and the rest read as before; onLine and passChunk judge lines alike (speed only)
    if (partial !== "" || openPromise !== null) {
      // Finish the line in progress first; the rest of the chunk then starts at a line start.
      const first = /\r\n|\r|\n/.exec(text)
      // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,ArithmeticOperator,StringLiteral: a \r ending a chunk then ends its line as \r\n would, the \n after it ending a blank line (skipped); other chunks are split alike either way
      if (first === null || partial.endsWith("\r") || (first[0] === "\r" && first.index === text.length - 1)) {
        return splitLines(partial + text)
      }
      const line = partial + text.slice(0, first.index)
      // Stryker disable next-line StringLiteral: the line in progress is set again (by passChunk or splitLines) before it is next read
      partial = ""
      onLine(line)
      text = text.slice(first.index + first[0].length)
    }
    // The common case, kept cheap: a chunk of ordinary lines (no promise, no fence).
    // Stryker disable next-line MethodExpression,StringLiteral,BlockStatement: splitLines judges lines as passChunk does, and a \r ending a chunk ends its line either way (the \n after it ends a blank line, skipped)
    if (openPromise === null && !text.endsWith("\r") && /[\r\n]/.test(text) && !mayHoldPromise(text) && !mayOpenFence(text)) {
      return passChunk(text)
    }
    splitLines(text)
  }

  const streamDecoder = new TextDecoder()
  const lineDecoder = new TextDecoder()

  /** `passChunk` on bytes of whole lines and a partial last one, with no mark in them: only what it needs is decoded. */
  const passBytes = (bytes: Uint8Array) => {
    const last = lastIndexOf(bytes, NEWLINE)
    // Stryker disable next-line ConditionalExpression: settling with nothing pending does nothing
    if (pending !== null) {
      // The first non-blank line settles the pending occurrence.
      for (let start = 0; start < last;) {
        const end = indexOf(bytes, NEWLINE, start)
        const line = /^\s*(\S.*)$/s.exec(lineDecoder.decode(bytes.subarray(start, end)))
        if (line !== null) {
          settle(line[1]!)
          break
        }
        start = end + 1
      }
    }
    let end = last
    while (end > 0) {
      const start = lastIndexOf(bytes, NEWLINE, end - 1) + 1
      const line = lineDecoder.decode(bytes.subarray(start, end))
      if (NON_BLANK.test(line)) {
        previousRaw = line
        if (fence !== null) fence.onlyPromise = false
        break
      }
      end = start - 1
    }
    // Kept whole, as passChunk keeps it: the next chunk finishes or compacts it.
    partial = streamDecoder.decode(bytes.subarray(last + 1), { stream: true })
  }

  const feedBytes = (bytes: Uint8Array) => {
    const first = indexOf(bytes, NEWLINE)
    // Stryker disable next-line EqualityOperator,UnaryOperator: the text path judges any chunk as passBytes does, and a chunk taken apart goes line by line where the text path would take it (speed only)
    if (first === -1 || openPromise !== null || mayMatter(bytes)) return feed(streamDecoder.decode(bytes, { stream: true }))
    // The line in progress is finished through the text path; after its line break the decoder holds nothing.
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: bytes up to a line break end with a whole character, so decoding them streaming or not gives the same text
    feed(streamDecoder.decode(bytes.subarray(0, first + 1), { stream: true }))
    const rest = bytes.subarray(first + 1)
    // Stryker disable next-line UnaryOperator: passBytes keeps bytes with no line break as the line in progress, as the text path does (speed only)
    if (openPromise !== null || indexOf(rest, NEWLINE) === -1) return feed(streamDecoder.decode(rest, { stream: true }))
    passBytes(rest)
  }

  return {
    feed,
    feedBytes,
    judgement: () => {
      const undecoded = streamDecoder.decode()
      // Stryker disable next-line StringLiteral: feeding an empty string does nothing
      if (undecoded !== "") feed(undecoded)
      // Stryker disable next-line StringLiteral: an empty line in progress is blank, and blank lines (inside a split promise too) are skipped
      if (partial !== "") {
        const rest = partial
        partial = ""
        onLine(rest)
      }
      if (openPromise !== null) {
        const joined = openPromise.text
        openPromise = null
        judgeLine(joined, joined)
      }
      settle(null)
      if (fence !== null) {
        closeFence(fence)
        fence = null
      }
      return { claimed, verdicts: [...verdicts], occurrences }
    }
  }
}

/** The judgement of a whole text. */
export const judgeCompletion = (text: string, options: CompletionJudgeOptions): CompletionJudgement => {
  const judge = makeCompletionJudge(options)
  judge.feed(text)
  return judge.judgement()
}
