/**
 * Claim or mention: how one occurrence of the promise is judged from the words around it on its
 * line (and the line before it). `CompletionJudge` applies this to every line the agent says.
 */

/** The judgement of one occurrence of `<promise>…</promise>`. */
export interface Verdict {
  readonly accepted: boolean
  /** Why: `alone on its line`, `echo of the prompt`, `deferred: "once the tests pass"`, … */
  readonly reason: string
  /** The line it was found on, shortened. */
  readonly text: string
}

export interface Occurrence {
  /** Where the opening tag starts in the line. */
  readonly offset: number
  /** Nothing but markdown or punctuation around it on its line. */
  readonly bare: boolean
  /** It holds the token (not an empty or a wrong one). */
  readonly wellFormed: boolean
  readonly verdict: Verdict
}

/**
 * The rule's patterns and steps, made afresh for each use: the patterns are cheap to build next to
 * the work of judging a line that holds a promise, and each use of them belongs to the test that
 * makes it (mutation testing can then run only the tests that reach a pattern).
 */
const makeRule = (tag = "promise") => {
  // The token holds no `<` or `>`: the search for a closing tag stops at the next tag.
  const PROMISE = new RegExp(`<\\s*${tag}\\s*>([^<>]{0,1024}?)<\\s*\\/\\s*${tag}\\s*>`, "gi")
  /** How much of the line on either side of an occurrence is read to judge it. */
  const CONTEXT = 1024
  const EMOJI = /[\p{Extended_Pictographic}\u200d\ufe0f\u20e3]/gu
  /** Nothing a reader would take for words: whitespace, punctuation, symbols, emoji. */
  const NO_WORDS = /^[\s\p{P}\p{S}\p{Extended_Pictographic}\u200d\ufe0f\u20e3]*$/u
  const MARKDOWN = /[*_`~]/g
  const LINE_MARKER = /^\s*(?:[-*+]\s+|\d+[.)]\s+|#{1,6}\s+)?/
  const SENTENCE_END = /[.!?…]["'”’)\]]*$/
  const ABBREVIATION = /\b(?:e\.g|i\.e|etc|vs|cf|approx)\.$/i
  const LABEL_END = /\s*(?::|->|=>|-|—|–|→)$/

  const NEGATES = /\b(?:not|never|cannot|yet)\b|n['’]t\b/i
  const CONDITIONAL = /\b(?:if|once|when|whenever|after|until|till|unless|before|later|eventually|afterwards)\b|\bas soon as\b/i
  const MODAL = /\b(?:would|could|should|might)\b/i
  const FUTURE = /\b(?:will|shall|going to)\b|['’]ll\b/i
  /** A future that is not deferred: "I'll now print:", "Everything passes, so I'll print:". */
  const IMMEDIATE = /\b(?:now|here|below|done|complete|completed|finished|passes|passing|implemented)\b/i
  const DEFINES = /(?:\b(?:signal|token|marker|tag|string|promise|phrase|keyword|word)\b.*\b(?:is|are|means|reads|looks like|would be|will be|should be)|\b(?:means|stands for|defined as))$/i
  const QUOTES = /\b(?:example|e\.g|for instance|such as|quote|quoted|quoting|literally|says|said|template|format|syntax)\b/i
  /** A new sentence after the promise that takes it back. */
  const TAKES_BACK = /^(?:if|once|when|after|until|unless|but|only|provided|assuming|as soon as)\b|^(?:not|never|just kidding)\b|\bnot (?:yet|really|actually|done|complete|finished)\b/i

  const quote = (text: string, max = 60) => {
    const flat = text.replace(MARKDOWN, "").replace(/\s+/g, " ").trim()
    return `"${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}"`
  }

  const excerpt = (line: string, offset: number) => {
    const flat = line.replace(/\s+/g, " ").trim()
    if (flat.length <= 160) return flat
    const start = Math.max(0, Math.min(offset - 60, flat.length - 160))
    return `${start > 0 ? "…" : ""}${flat.slice(start, start + 158)}…`
  }

  const lastSentence = (text: string) => {
    const parts = text.split(/(?<=[.!?…])\s+/)
    return parts[parts.length - 1]!
  }

  /** Why a label before the promise (`When it is done I will print:`) makes it a mention; null when it does not. */
  const decideLabel = (label: string): string | null => {
    const words = label.replace(MARKDOWN, "").replace(LABEL_END, "").trim()
    if (NEGATES.test(words)) return `negated: ${quote(words)}`
    if (DEFINES.test(words)) return `defined: ${quote(words)}`
    if (QUOTES.test(words)) return `quoted: ${quote(words)}`
    if (CONDITIONAL.test(words) || MODAL.test(words) || (FUTURE.test(words) && !IMMEDIATE.test(words))) {
      return `deferred: ${quote(words)}`
    }
    return null
  }

  /**
   * The line before a promise that stands alone (on its line, or in a code block of its own): when
   * it ends with `:` and its last sentence defers, negates, defines or quotes what follows
   * (`Here is the required format:`), the reason the promise is a mention; else null.
   */
  const decideLineBefore = (previousLine: string | null): string | null => {
    const previous = previousLine?.replace(/[\s*_`~]+$/, "") ?? ""
    return previous.endsWith(":") ? decideLabel(lastSentence(previous.replace(LINE_MARKER, ""))) : null
  }

  /** A sentence that mentions the promise: which words make it a mention. */
  const mentionReason = (before: string, after: string) => {
    const clause = after.split(/[.!?;]/, 1)[0]!
    const sentence = lastSentence(before)
    const negated = [sentence, clause].find((words) => NEGATES.test(words))
    if (negated !== undefined) return `negated: ${quote(negated)}`
    const deferred = [clause, sentence].find((words) => CONDITIONAL.test(words) || MODAL.test(words) || FUTURE.test(words))
    if (deferred !== undefined) return `deferred: ${quote(deferred)}`
    return "mentioned inside a sentence"
  }

  /** What follows the promise on its line: null when it leaves the claim standing, else the reason. */
  const judgeAfter = (before: string, after: string): string | null => {
    const rest = after // markdown and whitespace before the words are punctuation: `lead` skips them
    if (NO_WORDS.test(rest)) return null
    const lead = /^[\s\p{P}\p{S}\p{Extended_Pictographic}\u200d\ufe0f\u20e3]*/u.exec(rest)![0]
    const body = rest.slice(lead.length)
    const newSentence = /[.!?;]|\p{Extended_Pictographic}/u.test(lead) || /^\p{Lu}/u.test(body)
    if (!newSentence) return mentionReason(before, rest)
    const sentence = body.split(/(?<=[.!?])\s/, 1)[0] ?? body
    if (TAKES_BACK.test(sentence)) return `${NEGATES.test(sentence.split(/\s/, 1)[0]!) ? "negated" : "deferred"}: ${quote(sentence)}`
    return null
  }

  /** What precedes the promise on its line (and the line before): null when it is a claim, else the reason. */
  const judgeBefore = (rawBefore: string, after: string, previousLine: string | null): { reason: string | null; claim: string } => {
    const trimmed = rawBefore.replace(/[\s*_`~]+$/, "")
    if (/^\s*>/.test(trimmed)) return { reason: "quoted (a blockquote)", claim: "" }
    const before = trimmed.replace(LINE_MARKER, "").replace(EMOJI, " ").replace(MARKDOWN, "").trim()
    if (NO_WORDS.test(before)) return { reason: decideLineBefore(previousLine), claim: "alone on its line" }
    if (/\p{Extended_Pictographic}\ufe0f?$/u.test(trimmed) || (SENTENCE_END.test(before) && !ABBREVIATION.test(before))) {
      return { reason: null, claim: "after a finished sentence" }
    }
    if (LABEL_END.test(before)) return { reason: decideLabel(lastSentence(before)), claim: "after a label" }
    // Stryker disable next-line StringLiteral: the claim is read only when the reason is null, and a mention always has one
    return { reason: mentionReason(before, after), claim: "" }
  }

  /** Every occurrence of the promise tag on one normalised line, judged. */
  const judgeOccurrence = (line: string, token: string, previousLine: string | null): Array<Occurrence> => {
    const found: Array<Occurrence> = []
    for (const match of line.matchAll(PROMISE)) {
      const offset = match.index
      // Only the words near it matter: a bounded window keeps a line of many occurrences linear.
      const before = line.slice(Math.max(0, offset - CONTEXT), offset)
      const after = line.slice(offset + match[0].length, offset + match[0].length + CONTEXT)
      const text = excerpt(line.slice(Math.max(0, offset - 200), offset + match[0].length + 200), Math.min(offset, 200))
      const content = match[1]!.replace(/\s+/g, " ").trim().replace(/^[*_`~]+(?=\S)|(?<=\S)[*_`~]+$/g, "")
      const bare = NO_WORDS.test(before.replace(/^\s*>/, "x")) && NO_WORDS.test(after)
      const wellFormed = content !== "" && content.toLowerCase() === token.replace(/\s+/g, " ").trim().toLowerCase()
      const reject = (reason: string) => found.push({ offset, bare, wellFormed, verdict: { accepted: false, reason, text } })
      if (!wellFormed) {
        reject(content === "" ? "empty promise" : `wrong token: ${quote(content, 30)}`)
        continue
      }
      const judgedBefore = judgeBefore(before, after, previousLine)
      const reason = judgedBefore.reason ?? judgeAfter(before, after)
      if (reason !== null) {
        reject(reason)
        continue
      }
      found.push({
        offset,
        bare,
        wellFormed,
        verdict: { accepted: true, reason: judgedBefore.claim, text }
      })
    }
    return found
  }

  return { decideLabel, decideLineBefore, judgeOccurrence }
}

/** Why a label before the promise (`When it is done I will print:`) makes it a mention; null when it does not. */
export const decideLabel = (label: string): string | null => makeRule().decideLabel(label)

/** Why the line before a promise standing alone (`for example:`) makes it a mention; null when it does not. */
export const decideLineBefore = (previousLine: string | null): string | null => makeRule().decideLineBefore(previousLine)

/** Every occurrence of the promise tag (or `tag`) on one normalised line, judged. */
export const judgeOccurrence = (line: string, token: string, previousLine: string | null, tag = "promise"): Array<Occurrence> =>
  makeRule(tag).judgeOccurrence(line, token, previousLine)
