/**
 * The one rule for a reviewer's verdict: `<verdict>approve</verdict>`, or
 * `<verdict>changes</verdict>` followed by what must change, judged as the completion promise is
 * (the same judge, with the tag `verdict`): a verdict inside an echo of the instructions, in a fenced
 * example, deferred, negated or inside a sentence does not stand. A standing `changes` outweighs
 * any approval; no standing verdict is not an approval.
 */
import { type CompletionJudgement, makeCompletionJudge } from "../completion/CompletionJudge.js"
import type { TextJudge } from "../harness/Capture.js"

/** What a reviewer's own text comes to. */
export type ReviewJudgement =
  | { readonly _tag: "Approve" }
  | { readonly _tag: "Changes" }
  | {
    readonly _tag: "None"
    /** Why: the first verdict seen and why it did not stand, or that there was none. */
    readonly reason: string
  }

const VERDICT_TAG = "verdict"

/** The judgement of a reviewer's text, from the judgements of its approvals and of its requests for changes. */
export const reviewJudgement = (approve: CompletionJudgement, changes: CompletionJudgement): ReviewJudgement => {
  if (changes.claimed) return { _tag: "Changes" }
  if (approve.claimed) return { _tag: "Approve" }
  // Each judge sees the other's word as a wrong token: the reason is the judge's whose word it was.
  const seen = [...approve.verdicts, ...changes.verdicts]
  const first = seen.find((verdict) => !verdict.reason.startsWith("wrong token")) ?? seen[0]
  return {
    _tag: "None",
    reason: first === undefined ? "the reviewer gave no verdict" : `its verdict did not stand: "${first.text}" (${first.reason})`
  }
}

/** Judges a reviewer's text as it streams; `prompt` is the reviewer's prompt, which an echo is recognised against. */
export const makeVerdictJudge = (prompt: string): TextJudge<ReviewJudgement> => {
  const approve = makeCompletionJudge({ token: "approve", prompt, tag: VERDICT_TAG })
  const changes = makeCompletionJudge({ token: "changes", prompt, tag: VERDICT_TAG })
  return {
    feed: (text) => {
      approve.feed(text)
      changes.feed(text)
    },
    feedBytes: (bytes) => {
      approve.feedBytes(bytes)
      changes.feedBytes(bytes)
    },
    judgement: () => reviewJudgement(approve.judgement(), changes.judgement())
  }
}

/**
 * What must change, from the end of the reviewer's text (`said`): what follows its last
 * `<verdict>changes</verdict>`, or, when nothing does, the text before it; at most `max` characters.
 */
export const findingsOf = (said: string, max = 4000): string => {
  // Made for each use, as the completion rule's patterns are: cheap beside a review.
  const marks = [...said.matchAll(/<\s*verdict\s*>\s*changes\s*<\s*\/\s*verdict\s*>/gi)]
  const last = marks.at(-1)
  const after = last === undefined ? said : said.slice(last.index + last[0].length)
  const before = last === undefined ? "" : said.slice(0, last.index)
  const text = (after.trim() === "" ? before : after).trim()
  if (text === "") return "the reviewer asked for changes without saying which"
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
