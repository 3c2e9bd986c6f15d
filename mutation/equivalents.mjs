// Surviving mutants that change no behaviour, where a `// Stryker disable` comment would also hide
// mutants of the same line that do: each names its file, mutator and replacement (as the report
// shows it), a piece of the mutated line, and why it is equivalent. `pnpm mutate` leaves them out of
// the score and lists them in MUTATION.md; an entry that no longer matches a survivor is reported.
export const equivalents = [
  // CompletionRule
  { file: "packages/core/src/CompletionRule.ts", mutator: "Regex", replacement: "/\\s*(?:[-*+]\\s+|\\d+[.)]\\s+|#{1,6}\\s+)?/", line: "const LINE_MARKER = /^\\s*(?:[-*+]\\s+|\\d+[.)]\\s+|#{1,6}\\s+)?/",
    reason: "the pattern can match nothing, so without ^ its first match is still at the start of the text (replace without g takes only the first)" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "Regex", replacement: "/^\\s*(?:[-*+]\\s+|\\d+[.)]\\s+|#{1,6}\\s+)/", line: "const LINE_MARKER = /^\\s*(?:[-*+]\\s+|\\d+[.)]\\s+|#{1,6}\\s+)?/",
    reason: "with no marker it differs only in leaving the leading whitespace, which every use trims or skips" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "Regex", replacement: "/^\\s*(?:[-*+]\\s|\\d+[.)]\\s+|#{1,6}\\s+)?/", line: "const LINE_MARKER = /^\\s*(?:[-*+]\\s+|\\d+[.)]\\s+|#{1,6}\\s+)?/",
    reason: "leaves only whitespace after the marker, which every use trims or skips" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "Regex", replacement: "/^\\s*(?:[-*+]\\s+|\\d+[.)]\\s|#{1,6}\\s+)?/", line: "const LINE_MARKER = /^\\s*(?:[-*+]\\s+|\\d+[.)]\\s+|#{1,6}\\s+)?/",
    reason: "leaves only whitespace after the marker, which every use trims or skips" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "Regex", replacement: "/^\\s*(?:[-*+]\\s+|\\d+[.)]\\s+|#{1,6}\\s)?/", line: "const LINE_MARKER = /^\\s*(?:[-*+]\\s+|\\d+[.)]\\s+|#{1,6}\\s+)?/",
    reason: "leaves only whitespace after the marker, which every use trims or skips" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "Regex", replacement: "/(?<=[.!?…])\\s/", line: "const parts = text.split(/(?<=[.!?…])\\s+/)",
    reason: "the last sentence keeps only leading whitespace, which every use of it trims or skips" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "Regex", replacement: "/[\\s\\p{P}\\p{S}\\p{Extended_Pictographic}\\u200d\\ufe0f\\u20e3]*/u", line: "const lead = /^[\\s\\p{P}",
    reason: "the pattern can match nothing, so without ^ exec still matches at the start, as much as it can" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "StringLiteral", replacement: '"Stryker was here!"', line: "return { reason: \"quoted (a blockquote)\", claim: \"\" }",
    reason: "the claim is read only when the reason is null, and a blockquote always has a reason" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "StringLiteral", replacement: '"Stryker was here!"', line: "const previous = previousLine?.replace(",
    reason: "with no line before, any text that does not end with a colon reads the same: not a label (the other literal of the line is tested)" },
  { file: "packages/core/src/CompletionRule.ts", mutator: "ArithmeticOperator", replacement: "offset - match[0].length", line: "const text = excerpt(line.slice(",
    reason: "the text shown ends at most 98 characters after the promise starts, within either end of the window" }
]
