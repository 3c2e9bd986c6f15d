import { assert, describe, it } from "@effect/vitest"
import { findingsOf, makeVerdictJudge, type ReviewJudgement } from "../src/review/VerdictRule.js"
import { reviewPrompt } from "../src/review/ReviewPrompt.js"

const PROMPT = reviewPrompt({
  changeId: "001_greet",
  moduleId: null,
  proposal: "# Greet\n\nGreet people by name.",
  module: null,
  tasks: null,
  diff: "(no changes: the run's work is empty)",
  checks: [],
  closingMessage: "Done."
})

const judge = (text: string, prompt = PROMPT): ReviewJudgement => {
  const j = makeVerdictJudge(prompt)
  j.feed(text)
  return j.judgement()
}

describe("a reviewer's verdict", () => {
  it("approves with <verdict>approve</verdict> alone on its line, or after a finished sentence", () => {
    assert.deepStrictEqual(judge("Everything the proposal asks is there.\n<verdict>approve</verdict>\n"), { _tag: "Approve" })
    assert.deepStrictEqual(judge("All tasks are done. <verdict>APPROVE</verdict>"), { _tag: "Approve" })
  })

  it("asks for changes with <verdict>changes</verdict>, which outweighs an approval", () => {
    assert.deepStrictEqual(judge("<verdict>changes</verdict>\n- src/app.ts does not handle an empty name\n"), { _tag: "Changes" })
    assert.deepStrictEqual(judge("<verdict>approve</verdict>\nOn second thought:\n<verdict>changes</verdict>\nthe tests are weak\n"), { _tag: "Changes" })
  })

  it("gives none for a verdict in a fenced example, deferred, negated, or inside a sentence", () => {
    const fenced = judge("Here is the format to use:\n```\n<verdict>approve</verdict>\n```\nI have not decided.\n")
    assert.strictEqual(fenced._tag, "None")
    assert.match((fenced as { reason: string }).reason, /example|code block|format/)
    assert.strictEqual(judge("I would print <verdict>approve</verdict> once the tests pass.\n")._tag, "None")
    assert.strictEqual(judge("I cannot give <verdict>approve</verdict> yet.\n")._tag, "None")
    assert.strictEqual(judge("Once the tests pass:\n<verdict>approve</verdict>\n")._tag, "None")
  })

  it("gives none when the verdict only repeats the instructions it was given", () => {
    const lines = PROMPT.split("\n")
    const at = lines.findIndex((line) => line.includes("<verdict>approve</verdict>"))
    const echoed = judge(`${lines.slice(at - 1, at + 3).join("\n")}\n`)
    assert.strictEqual(echoed._tag, "None")
  })

  it("gives none, saying so, when there is no verdict at all or one of another word", () => {
    assert.deepStrictEqual(judge("Looks fine to me.\n"), { _tag: "None", reason: "the reviewer gave no verdict" })
    const other = judge("<verdict>maybe</verdict>\n")
    assert.strictEqual(other._tag, "None")
    assert.include((other as { reason: string }).reason, "wrong token")
  })

  it("names the verdict that did not stand by the judge whose word it was, never as the other's wrong token", () => {
    const inSentence = judge("I would print <verdict>changes</verdict> once I have read it all.\n")
    assert.strictEqual(inSentence._tag, "None")
    assert.include((inSentence as { reason: string }).reason, "its verdict did not stand")
    assert.notInclude((inSentence as { reason: string }).reason, "wrong token")
  })

  it("reads a verdict streamed in pieces and as bytes as it reads it whole", () => {
    const j = makeVerdictJudge(PROMPT)
    const bytes = new TextEncoder().encode("Reviewed.\n<verdict>chan")
    j.feedBytes(bytes)
    j.feed("ges</verdict>\nfix src/app.ts\n")
    assert.deepStrictEqual(j.judgement(), { _tag: "Changes" })
  })
})

describe("a reviewer's findings", () => {
  it("are what follows its last request for changes", () => {
    assert.strictEqual(findingsOf("I read it all.\n<verdict>changes</verdict>\n- `src/app.ts` does not handle an empty name\n"), "- `src/app.ts` does not handle an empty name")
  })

  it("are the text before it when nothing follows, and say so when there is nothing at all", () => {
    assert.strictEqual(findingsOf("The parser drops the last line.\n<verdict>changes</verdict>\n"), "The parser drops the last line.")
    assert.strictEqual(findingsOf("<verdict>changes</verdict>"), "the reviewer asked for changes without saying which")
  })

  it("are cut to a size a prompt takes", () => {
    const long = findingsOf(`<verdict>changes</verdict>\n${"x".repeat(10_000)}`, 100)
    assert.strictEqual(long.length, 100)
    assert.isTrue(long.endsWith("…"))
  })

  it("read a request for changes written with spaces in its tags", () => {
    assert.strictEqual(findingsOf("Read.\n< verdict > changes < / verdict >\n- fix it\n"), "- fix it")
  })

  it("are kept whole at exactly the size, and a blank text says there were none", () => {
    assert.strictEqual(findingsOf("abcd", 4), "abcd")
    assert.strictEqual(findingsOf("abcde", 4), "abc…")
    assert.strictEqual(findingsOf(" \n "), "the reviewer asked for changes without saying which")
  })
})
