import { assert, describe, it } from "@effect/vitest"
import { decideLabel, decideLineBefore, judgeOccurrence } from "../src/completion/CompletionRule.js"

const PROMISE = "<promise>COMPLETE</promise>"

/** The one occurrence on `line`: its verdict, and whether it stood bare. */
const judgeOne = (line: string, previousLine: string | null = null, token = "COMPLETE") => {
  const found = judgeOccurrence(line, token, previousLine)
  assert.strictEqual(found.length, 1, `one occurrence in ${JSON.stringify(line)}`)
  return found[0]!
}

const verdictOf = (line: string, previousLine: string | null = null, token = "COMPLETE") => {
  const { accepted, reason } = judgeOne(line, previousLine, token).verdict
  return { accepted, reason }
}

const accepted = (reason: string) => ({ accepted: true, reason })
const rejected = (reason: string) => ({ accepted: false, reason })

/** `w000 w001 …`: words of five characters with their space, so offsets are easy to count. */
const words = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `w${String(from + i).padStart(3, "0")}`).join(" ")

describe("judgeOccurrence", () => {
  it("finds tags with whitespace inside them", () => {
    assert.deepStrictEqual(verdictOf("< promise >COMPLETE< / promise >"), accepted("alone on its line"))
    assert.deepStrictEqual(verdictOf("<promise\t>COMPLETE</\tpromise >"), accepted("alone on its line"))
  })

  it("takes a promise alone on its line as a claim", () => {
    assert.deepStrictEqual(judgeOccurrence(PROMISE, "COMPLETE", null), [
      { offset: 0, bare: true, wellFormed: true, verdict: { accepted: true, reason: "alone on its line", text: PROMISE } }
    ])
  })

  it("quotes the words before it without a list marker, an item number or heading marks", () => {
    assert.deepStrictEqual(verdictOf(`12) When the tests pass, print: ${PROMISE}`), rejected(`deferred: "When the tests pass, print"`))
    assert.deepStrictEqual(verdictOf(`+ When the tests pass, print: ${PROMISE}`), rejected(`deferred: "When the tests pass, print"`))
    assert.deepStrictEqual(verdictOf(`# When the tests pass, print: ${PROMISE}`), rejected(`deferred: "When the tests pass, print"`))
    assert.deepStrictEqual(verdictOf(`###### When the tests pass, print: ${PROMISE}`), rejected(`deferred: "When the tests pass, print"`))
  })

  it("quotes the label of the line before without its list marker or heading marks", () => {
    assert.deepStrictEqual(verdictOf(PROMISE, "# When the tests pass, print:"), rejected(`deferred: "When the tests pass, print"`))
    assert.deepStrictEqual(verdictOf(PROMISE, "## When the tests pass, print:"), rejected(`deferred: "When the tests pass, print"`))
    assert.deepStrictEqual(verdictOf(PROMISE, "12) When the tests pass, print:"), rejected(`deferred: "When the tests pass, print"`))
  })

  it("reads the line before as a label only when it ends with a colon, markdown and spaces after it aside", () => {
    assert.deepStrictEqual(verdictOf(PROMISE, "**When the tests pass, print:**"), rejected(`deferred: "When the tests pass, print"`))
    assert.deepStrictEqual(verdictOf(PROMISE, "When the tests pass, print:  "), rejected(`deferred: "When the tests pass, print"`))
    assert.deepStrictEqual(verdictOf(PROMISE, "If anything breaks later, revert it."), accepted("alone on its line"))
  })

  it("takes a number with a point for words, not a finished sentence", () => {
    assert.deepStrictEqual(verdictOf(`Release 1.2 works ${PROMISE}`), rejected("mentioned inside a sentence"))
    assert.deepStrictEqual(verdictOf(`It works (see the log.) ${PROMISE}`), accepted("after a finished sentence"))
  })

  it("takes an abbreviation only at the end of the words before as no finished sentence", () => {
    assert.deepStrictEqual(verdictOf(`See e.g. the log. All done. ${PROMISE}`), accepted("after a finished sentence"))
    assert.deepStrictEqual(verdictOf(`Tests, docs, etc. ${PROMISE}`), rejected("mentioned inside a sentence"))
  })

  it("quotes the last sentence before a mention", () => {
    assert.deepStrictEqual(verdictOf(`The build is done. I will print ${PROMISE}`), rejected(`deferred: "I will print"`))
    assert.deepStrictEqual(verdictOf(`The build is done.🎉I will print ${PROMISE}`), rejected(`deferred: "I will print"`))
    assert.deepStrictEqual(verdictOf(`I will \`print\` ${PROMISE}`), rejected(`deferred: "I will print"`))
  })

  it("reads a new sentence after the promise: only one that opens with a condition or a denial takes it back", () => {
    assert.deepStrictEqual(verdictOf(`${PROMISE} Tests pass when run.`), accepted("alone on its line"))
    assert.deepStrictEqual(verdictOf(`${PROMISE} Fixed the knot in the parser.`), accepted("alone on its line"))
    assert.deepStrictEqual(verdictOf(`${PROMISE} Once CI is green.`), rejected(`deferred: "Once CI is green."`))
    assert.deepStrictEqual(verdictOf(`${PROMISE}. Not yet.`), rejected(`negated: "Not yet."`))
    assert.deepStrictEqual(verdictOf(`${PROMISE} — Not yet.`), rejected(`negated: "Not yet."`))
    assert.deepStrictEqual(
      verdictOf(`${PROMISE} Version 1.2 is not yet released.`),
      rejected(`deferred: "Version 1.2 is not yet released."`)
    )
  })

  it("reads words after the promise that go on its sentence as a mention", () => {
    assert.deepStrictEqual(verdictOf(`${PROMISE} and it works`), rejected("mentioned inside a sentence"))
    assert.deepStrictEqual(verdictOf(`${PROMISE} — and it works`), rejected("mentioned inside a sentence"))
    assert.deepStrictEqual(verdictOf(`${PROMISE} and CI is green`), rejected("mentioned inside a sentence"))
    assert.deepStrictEqual(verdictOf(`${PROMISE}** once  the \`tests\` pass`), rejected(`deferred: "once the tests pass"`))
  })

  it("takes an emoji at the end of the words before as the end of a sentence, spaces after it aside", () => {
    assert.deepStrictEqual(verdictOf(`All tests pass 🎉  ${PROMISE}`), accepted("after a finished sentence"))
    assert.deepStrictEqual(verdictOf(`Result: ✅\u200d ${PROMISE}`), accepted("after a label"))
  })

  it("takes only a line that starts with > for a blockquote", () => {
    assert.deepStrictEqual(verdictOf(`  > ${PROMISE}`), rejected("quoted (a blockquote)"))
    assert.deepStrictEqual(verdictOf(`Tests: 3 > 2, all done. ${PROMISE}`), accepted("after a finished sentence"))
  })

  it("says whether a promise stands bare: nothing but markdown or punctuation around it, a blockquote is not", () => {
    assert.strictEqual(judgeOne(`-> ${PROMISE}`).bare, true)
    assert.strictEqual(judgeOne(`**${PROMISE}**!`).bare, true)
    assert.strictEqual(judgeOne(`> ${PROMISE}`).bare, false)
    assert.strictEqual(judgeOne(`  > ${PROMISE}`).bare, false)
    assert.strictEqual(judgeOne(`Done. ${PROMISE}`).bare, false)
  })

  it("compares the token with markdown around it and whitespace inside it ignored", () => {
    assert.deepStrictEqual(verdictOf("<promise>**COMPLETE**</promise>"), accepted("alone on its line"))
    assert.deepStrictEqual(verdictOf("<promise>ALL  DONE</promise>", null, "ALL DONE"), accepted("alone on its line"))
    assert.deepStrictEqual(verdictOf(PROMISE, null, " COMPLETE "), accepted("alone on its line"))
    // A run of whitespace inside the token given is one space too.
    assert.deepStrictEqual(verdictOf("<promise>ALL DONE</promise>", null, "ALL \t DONE"), accepted("alone on its line"))
  })

  it("never takes an empty promise for the token, even an empty token", () => {
    const found = judgeOne("<promise></promise>", null, " ")
    assert.strictEqual(found.wellFormed, false)
    assert.deepStrictEqual(found.verdict, { accepted: false, reason: "empty promise", text: "<promise></promise>" })
  })

  it("quotes a wrong token of up to 30 characters whole, a longer one shortened", () => {
    const thirty = "X".repeat(30)
    assert.deepStrictEqual(verdictOf(`<promise>${thirty}</promise>`), rejected(`wrong token: "${thirty}"`))
    assert.deepStrictEqual(verdictOf(`<promise>${thirty}Y</promise>`), rejected(`wrong token: "${"X".repeat(29)}…"`))
  })

  it("reads only 1024 characters before the promise", () => {
    // The words are read; the filler after the promise is beyond them.
    assert.deepStrictEqual(verdictOf(`I will print ${PROMISE}${"=".repeat(1500)}`), rejected(`deferred: "I will print"`))
    // The blockquote mark is more than 1024 characters before it.
    assert.deepStrictEqual(verdictOf(`> ${"word ".repeat(210)}Done. ${PROMISE}`), accepted("after a finished sentence"))
  })

  it("reads only 1024 characters after the promise", () => {
    assert.deepStrictEqual(verdictOf(`${PROMISE}${" ".repeat(1000)}once the tests pass`), rejected(`deferred: "once the tests pass"`))
    assert.deepStrictEqual(verdictOf(`${PROMISE}${" ".repeat(1030)}once the tests pass`), accepted("alone on its line"))
  })
})

describe("the text of a verdict", () => {
  it("is a short line with its whitespace collapsed", () => {
    assert.strictEqual(judgeOne(`  Done.  \t${PROMISE}  `).verdict.text, `Done. ${PROMISE}`)
  })

  it("is a line of 160 characters whole", () => {
    const line = `${"a".repeat(127)} ${PROMISE}!!!!!`
    assert.strictEqual(line.length, 160)
    assert.strictEqual(judgeOne(line).verdict.text, line)
  })

  it("is the start of a long line that opens with the promise, marked as cut at its end", () => {
    const line = `${PROMISE} ${words(0, 100)}`
    assert.strictEqual(judgeOne(line).verdict.text, `${line.slice(0, 158)}…`)
  })

  it("is 158 characters of a long line from 60 before the promise, marked as cut at both ends", () => {
    const line = `${words(0, 100)} ${PROMISE} ${words(100, 100)}`
    assert.strictEqual(line.indexOf(PROMISE), 500)
    // Of the 200 characters kept before the promise and after it, 60 before it onwards.
    assert.strictEqual(judgeOne(line).verdict.text, `…${line.slice(440, 598)}…`)
  })

  it("is the last 160 characters of a long line that ends soon after the promise", () => {
    const line = `${words(0, 100)} ${PROMISE} ok`
    assert.strictEqual(judgeOne(line).verdict.text, `…${line.slice(line.length - 160, line.length - 2)}…`)
  })
})

describe("decideLabel", () => {
  it("leaves a label that states the work done", () => {
    assert.strictEqual(decideLabel("Status:"), null)
    assert.strictEqual(decideLabel("We ran all of them"), null)
    assert.strictEqual(decideLabel("The tag is in the log; result"), null)
  })

  it("defers on a future, a condition or a modal, quoting the words without markdown and spaces", () => {
    assert.strictEqual(decideLabel("Next I will print it"), `deferred: "Next I will print it"`)
    assert.strictEqual(decideLabel("When  `done`:"), `deferred: "When done"`)
  })

  it("takes a label that ends in what the token is for a definition", () => {
    assert.strictEqual(decideLabel("The signal is "), `defined: "The signal is"`)
  })
})

describe("decideLineBefore", () => {
  it("makes what follows a line that puts forward the format to use a mention", () => {
    assert.strictEqual(decideLineBefore("Here is the required format:"), `quoted: "Here is the required format"`)
    assert.strictEqual(decideLineBefore("- **For example:**"), `quoted: "For example"`)
    assert.strictEqual(decideLineBefore("Print it when done. Use this syntax:  "), `quoted: "Use this syntax"`)
  })

  it("leaves a line that reports the work done, one without a colon, and none at all", () => {
    assert.strictEqual(decideLineBefore("All tasks are complete and the tests pass:"), null)
    assert.strictEqual(decideLineBefore("Here is the required format."), null)
    assert.strictEqual(decideLineBefore(null), null)
  })
})
