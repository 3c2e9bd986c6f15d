/**
 * Finds the completion promise in what the agent says, chunk by chunk, in bounded memory.
 *
 * The rule:
 * - Only the agent's own text is fed here (harnesses report it as `AgentText`): never stderr,
 *   never tool output, never our prompt.
 * - The opening `<promise>` tag must begin a line (only spaces or tabs before it). The prompt
 *   mentions the promise only in the middle of a sentence, so an agent that echoes its prompt
 *   does not end the loop by accident.
 * - Any whitespace, newlines included, may surround the token inside the tags.
 * - A promise may be split across any number of chunks, as long as the whole promise, from its
 *   line start to `</promise>`, is at most `MAX_PROMISE_LENGTH` characters longer than the token.
 */
export const MAX_PROMISE_LENGTH = 4096

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

export interface CompletionDetector {
  /** Feeds the next chunk of agent text; true once the promise has been seen. */
  readonly feed: (text: string) => boolean
  readonly detected: () => boolean
}

export const makeCompletionDetector = (token: string): CompletionDetector => {
  const pattern = new RegExp(`\\n[ \\t]*<promise>\\s*${escapeRegExp(token.trim())}\\s*</promise>`)
  const window = MAX_PROMISE_LENGTH + token.length
  // `carry` is the tail of the text so far that a promise could still start in; a leading "\n"
  // stands for "this is the start of a line".
  let carry = "\n"
  let detected = false
  return {
    feed: (text) => {
      if (detected || text.length === 0) return detected
      // A promise either starts in the carry and ends within the first `window` characters of the
      // chunk, or lies inside the chunk: two searches, with no copy of the whole chunk.
      const boundary = carry + text.slice(0, window)
      if (pattern.test(boundary) || (text.length > window && pattern.test(text))) {
        detected = true
        carry = ""
        return true
      }
      carry = text.length >= window ? text.slice(text.length - window) : boundary.slice(Math.max(0, boundary.length - window))
      return false
    },
    detected: () => detected
  }
}

/** Whether a whole text holds the promise under the same rule. */
export const detectCompletion = (text: string, token: string): boolean =>
  makeCompletionDetector(token).feed(text)
