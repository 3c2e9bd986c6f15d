import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { judgeCompletion, makeCompletionJudge } from "../src/completion/CompletionJudge.js"
import { renderPrompt } from "../src/prompt/PromptBuilder.js"

// Under mutation testing (`pnpm mutate`) the properties run from one fixed seed: a mutant's result
// then depends on the code and the tests alone, as a run that keeps earlier results assumes.
if (process.env.STRYKER_MUTATOR_WORKER !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: 25 })

/** The prompt the loop really sends, with the sections a later iteration has. */
const prompt = renderPrompt({
  iteration: 3,
  minIterations: 1,
  maxIterations: 20,
  completionPromise: "COMPLETE",
  context: "Greet people warmly.",
  changeId: "001-01_greeting-cli",
  moduleId: "001",
  userPrompt: "Implement the change.",
  proposal: "# Greeting CLI\n\nAdd a `hello` command that greets the user by name.",
  module: "# Module 001\n\nCommand-line tools.",
  sections: [
    { title: "Tasks", body: "1/3 complete\nCurrent task: 1.2 Add the `src/hello.js` entry point" },
    { title: "Recent commits", body: "- abc1234 2026-11-22 Test: spool ralph: 001-01_greeting-cli iteration 2" }
  ]
})
const promptLines = prompt.split("\n").filter((line) => line.trim() !== "")
const ruleLine = promptLines.find((line) => line.includes("<promise>"))!
const ruleIndex = promptLines.indexOf(ruleLine)

interface Case {
  readonly name: string
  readonly text: string
  readonly claimed: boolean
  /** The reason of the first verdict that decides: the accepted one, else the first. */
  readonly reason: string | RegExp
  readonly token?: string
}

const claim = (name: string, text: string, reason: string | RegExp = /./, token?: string): Case => ({
  name,
  text,
  claimed: true,
  reason,
  ...(token === undefined ? {} : { token })
})
const mention = (name: string, text: string, reason: string | RegExp, token?: string): Case => ({
  name,
  text,
  claimed: false,
  reason,
  ...(token === undefined ? {} : { token })
})

const completions: ReadonlyArray<Case> = [
  claim("after a finished sentence on the same line", "I wrote hello.txt. <promise>COMPLETE</promise>", "after a finished sentence"),
  claim("alone on the last line", "All tasks are implemented and the tests pass.\n\n<promise>COMPLETE</promise>\n", "alone on its line"),
  claim("alone, the whole reply", "<promise>COMPLETE</promise>", "alone on its line"),
  claim("in bold", "Everything is done.\n\n**<promise>COMPLETE</promise>**\n", "alone on its line"),
  claim("in backticks", "All three tasks are checked off.\n`<promise>COMPLETE</promise>`", "alone on its line"),
  claim("after a status label", "Status: <promise>COMPLETE</promise>", "after a label"),
  claim("after a bold label", "**Final status:** <promise>COMPLETE</promise>", "after a label"),
  claim("after an arrow label", "Result → <promise>COMPLETE</promise>", "after a label"),
  claim("after an exclamation", "Done! <promise>COMPLETE</promise>", "after a finished sentence"),
  claim("with an emoji after", "All tests pass. <promise>COMPLETE</promise> 🎉", "after a finished sentence"),
  claim("after a check mark emoji", "All tasks complete ✅ <promise>COMPLETE</promise>", "after a finished sentence"),
  claim("followed by a new sentence", "<promise>COMPLETE</promise> Thanks for the clear proposal.", "alone on its line"),
  claim("whitespace inside the tags", "Finished.\n<promise>  COMPLETE  </promise>", "alone on its line"),
  claim("tags and token split over lines", "Finished.\n<promise>\nCOMPLETE\n</promise>\n", "alone on its line"),
  claim("lower case token", "Done.\n<promise>complete</promise>", "alone on its line"),
  claim("upper case tags", "Done.\n<PROMISE>COMPLETE</PROMISE>", "alone on its line"),
  claim("HTML-escaped", "Everything passes.\n&lt;promise&gt;COMPLETE&lt;/promise&gt;", "alone on its line"),
  claim("coloured with ANSI escapes", "\x1b[1m\x1b[32m<promise>COMPLETE</promise>\x1b[0m\n", "alone on its line"),
  claim("coloured with 256-colour codes", "\x1b[38;5;82m<promise>COMPLETE</promise>\x1b[0m", "alone on its line"),
  claim("after a cursor-style escape", "\x1b[2 q<promise>COMPLETE</promise>\x1b[?25h", "alone on its line"),
  claim("after a window-title escape", "\x1b]0;spool: done\x07<promise>COMPLETE</promise>", "alone on its line"),
  claim("inside a terminal hyperlink", "\x1b]8;;https://example.com/x\x1b\\<promise>COMPLETE</promise>\x1b]8;;\x1b\\", "alone on its line"),
  claim("after two-byte escapes", "\x1bM\x1b\\<promise>COMPLETE</promise>\x1b_", "alone on its line"),
  claim("with upper-case entities", "All done.\n&LT;promise&GT;COMPLETE&LT;/promise&GT;", "alone on its line"),
  claim("a code block holding only the promise", "All done:\n```\n<promise>COMPLETE</promise>\n```\n", "a code block holding only the promise"),
  claim(
    "a code block holding only the promise after a sentence reporting the work done",
    "All tasks are complete and the tests pass:\n\n```\n<promise>COMPLETE</promise>\n```\n",
    "a code block holding only the promise"
  ),
  claim("a code block holding only the promise after a finished sentence", "I implemented every task.\n```text\n<promise>COMPLETE</promise>\n```", "a code block holding only the promise"),
  claim("a label line announcing it now", "I'll now output the completion promise:\n<promise>COMPLETE</promise>", "alone on its line"),
  claim(
    "a label line stating completion",
    "Since every task is done, here is the completion signal:\n\n<promise>COMPLETE</promise>",
    "alone on its line"
  ),
  claim("in a bullet list", "Summary:\n- wrote src/hello.js\n- added tests\n- <promise>COMPLETE</promise>", "alone on its line"),
  claim(
    "a long report, then the promise",
    "## Summary\n\nI implemented the `hello` command in `src/hello.js`.\n\n### Verification\n\n```sh\nnpm test\n```\n\nAll 12 tests pass.\n\n<promise>COMPLETE</promise>\n",
    "alone on its line"
  ),
  claim("not on the last line", "<promise>COMPLETE</promise>\n\nLet me know if you need anything else.", "alone on its line"),
  claim("after a mention, a real claim", "I will print <promise>COMPLETE</promise> when done.\nIt is done now.\n<promise>COMPLETE</promise>", "alone on its line"),
  claim("with CRLF line ends", "All done.\r\n<promise>COMPLETE</promise>\r\n", "alone on its line"),
  claim("a custom token", "Shipped. <promise>ALL_DONE</promise>", "after a finished sentence", "ALL_DONE"),
  claim("under a heading", "## Result\n\n<promise>COMPLETE</promise>", "alone on its line"),
  claim("after an emoji and a short label", "🎉 Done: <promise>COMPLETE</promise>", "after a label"),
  claim("with spaces inside the tags", "Done.\n< promise >COMPLETE</ promise >", "alone on its line"),
  claim("after a code block fenced with tildes", "~~~\ncode\n~~~\nDone. <promise>COMPLETE</promise>", "after a finished sentence"),
  claim("after a line of backticks behind a no-break space (no fence)", "Notes:\n\u00a0```\nmore notes\nDone. <promise>COMPLETE</promise>\n", "after a finished sentence"),
  claim("after backticks indented four spaces (no fence)", "    ```<promise>COMPLETE</promise>", "alone on its line"),
  claim("after an ampersand written as an entity", "Tom &amp; Jerry wrote it. <promise>COMPLETE</promise>", "after a finished sentence"),
  claim("after a line with a stray tag behind an opening tag", "<promise>COMPLETE<br>\n<promise>COMPLETE</promise>", "alone on its line")
]

const nonCompletions: ReadonlyArray<Case> = [
  mention("an echo of the whole prompt", prompt, "echo of the prompt"),
  mention("an echo of the rule line and the next", `${ruleLine}\n${promptLines[ruleIndex + 1]}\n`, "echo of the prompt"),
  mention("an echo of the line before and the rule line", `${promptLines[ruleIndex - 1]}\n${ruleLine}\n`, "echo of the prompt"),
  mention("the rule line alone", ruleLine, /^deferred: "When, and only when/),
  mention("the rules quoted in a code block", `The rules say:\n\`\`\`\n${ruleLine}\n\`\`\``, "inside a code block"),
  mention("deferred to passing tests", "I will print <promise>COMPLETE</promise> once the tests pass", 'deferred: "once the tests pass"'),
  mention("negated with yet", "I can't output <promise>COMPLETE</promise> yet", /^negated: "I can't output"/),
  mention("a conditional explanation", "if you see <promise>COMPLETE</promise> the loop stops", /^deferred: "if you see"/),
  mention("a deferred label line", "When every task is done I will output:\n<promise>COMPLETE</promise>", /^deferred: "When every task is done/),
  mention("a defining label line", "The signal to stop is:\n<promise>COMPLETE</promise>", /^defined: "The signal to stop is"/),
  mention("a negating label line", "Do not print:\n<promise>COMPLETE</promise>", /^negated: "Do not print"/),
  mention("an example label", "For example: <promise>COMPLETE</promise>", /^quoted: "For example"/),
  mention("a deferred label on the same line", "Once the last test passes I'll print: <promise>COMPLETE</promise>", /^deferred: "Once the last test passes/),
  mention(
    "a code block holding only the promise, put forward as the format to use",
    "When every task is done, print the promise.\nHere is the required format:\n```\n<promise>COMPLETE</promise>\n```\n",
    "quoted: \"Here is the required format\""
  ),
  mention("a code block holding only the promise after \"for example:\"", "Print the promise, for example:\n\n~~~\n<promise>COMPLETE</promise>\n~~~", "quoted: \"Print the promise, for example\""),
  mention("a code block holding only the promise after a deferring label", "Once the tests pass I will print:\n```\n<promise>COMPLETE</promise>\n```", "deferred: \"Once the tests pass I will print\""),
  mention("the required format on the same line", "The required format: <promise>COMPLETE</promise>", "quoted: \"The required format\""),
  mention("alone on its line after the syntax to use", "Use this syntax:\n<promise>COMPLETE</promise>", "quoted: \"Use this syntax\""),
  mention("inside a shell command in a code block", "```bash\necho '<promise>COMPLETE</promise>'\n```", "inside a code block"),
  mention("inside a code block with other lines", "```\nstatus: ok\n<promise>COMPLETE</promise>\n```", "inside a code block"),
  // A line separator is only a character to Markdown, so it may stand in a fence line's info string.
  mention("inside a code block whose info string holds a line separator", "```text\u2028x\nstatus: ok\n<promise>COMPLETE</promise>\n```", "inside a code block"),
  mention("inside a code block past a line that cannot close it (words after a line separator)", "```\nstatus: ok\n```\u2028x\n<promise>COMPLETE</promise>\n```", "inside a code block"),
  mention("inside an unterminated code block", "```text\n<promise>COMPLETE</promise>\nmore output", "inside a code block"),
  mention("in a blockquote", "The proposal says:\n> <promise>COMPLETE</promise>", "quoted (a blockquote)"),
  mention("an empty promise", "Done.\n<promise></promise>", "empty promise"),
  mention("another token", "Done.\n<promise>DONE</promise>", 'wrong token: "DONE"'),
  mention("the tag names only", "I'll emit the <promise> tag when finished.", "(no promise)"),
  mention("mentioned mid-sentence without a deferral word", "The loop waits for <promise>COMPLETE</promise> from me", "mentioned inside a sentence"),
  mention("a plan for the future", "Next iteration I should print <promise>COMPLETE</promise> after fixing the test.", /^deferred: /),
  mention("taken back by the next sentence", "<promise>COMPLETE</promise> But the integration test still fails.", /^deferred: "But the integration test/),
  mention("taken back: not yet", "<promise>COMPLETE</promise> Not yet, though: two tasks remain.", /^negated: /),
  mention(
    "inside a tool call's input, as an agent printing JSON events would show it",
    '{"type":"tool_use","part":{"tool":"write","state":{"input":{"filePath":"notes.md","content":"<promise>COMPLETE</promise>"}}}}',
    "mentioned inside a sentence"
  ),
  mention(
    "inside a tool call's output shown as a code block",
    "Reading the instructions:\n```\n$ cat PROMPT.md\nPrint <promise>COMPLETE</promise> when done.\n```",
    "inside a code block"
  ),
  mention("a tool result line quoting a file", 'Tool result: cat notes.md -> "<promise>COMPLETE</promise>" (1 line)', /./),
  mention("a would-be claim", "I would output <promise>COMPLETE</promise> but the build is red.", /^deferred: |^negated: /),
  mention("a question", "Should I print <promise>COMPLETE</promise> now?", /^deferred: "Should I print"/),
  mention("the instructions restated", "Remember: only print <promise>COMPLETE</promise> when every task is done.", /^deferred: "when every task is done"/),
  mention("a half-written promise", "Done.\n<promise>COMPLETE", "(no promise)"),
  mention("a promise escaped twice", "Done.\n&amp;lt;promise&amp;gt;COMPLETE&amp;lt;/promise&amp;gt;", "(no promise)"),
  mention("an escape that is not a terminal's", "\x1b=x <promise>COMPLETE</promise>", "mentioned inside a sentence"),
  mention("inside a code block of four backticks holding a line of three", "````\n```\nDone. <promise>COMPLETE</promise>\n````", "inside a code block"),
  mention("inside a code block, after a line of tildes", "```\n~~~\n<promise>COMPLETE</promise>\n```", "inside a code block"),
  mention("inside a code block, after a fence line with an info string", "```\n```js\nDone. <promise>COMPLETE</promise>\n```", "inside a code block"),
  mention("inside a code block with indented fences", "Output:\n  ```\n  Done. <promise>COMPLETE</promise>\n  more\n  ```\n", "inside a code block"),
  mention("a code block holding two promises", "```\n<promise>COMPLETE</promise>\n<promise>COMPLETE</promise>\n```", "inside a code block"),
  mention("an empty code block, then a promise in a code block with more", "```\n```\n```\nok\n<promise>COMPLETE</promise>\n```", "inside a code block"),
  mention("a negating label line, a blank line between", "Do not print:\n\n<promise>COMPLETE</promise>", /^negated: "Do not print"/),
  mention("a promise spread over six lines", "Done.\n<promise>\n1\n2\n3\n4\n</promise>", "(no promise)"),
  mention("an opening tag ending a line of 4096 characters", `${"x".repeat(4087)}<promise>\nCOMPLETE</promise>`, "(no promise)"),
  mention("an opening tag ending a very long line", `${"x ".repeat(2500)}<promise>\nCOMPLETE</promise>`, "(no promise)")
]

const cases: ReadonlyArray<Case> = [...completions, ...nonCompletions]

/** Random cut points, the same for every run of the suite. */
const randomCuts = (text: string, seed: number) =>
  fc.sample(fc.array(fc.nat({ max: text.length }), { maxLength: 40 }), { seed, numRuns: 5 })

const chunksAt = (text: string, cuts: ReadonlyArray<number>) => {
  const points = [...cuts].sort((a, b) => a - b)
  const chunks: Array<string> = []
  let start = 0
  for (const point of points) {
    chunks.push(text.slice(start, point))
    start = point
  }
  return [...chunks, text.slice(start)]
}

const byteChunksAt = (bytes: Uint8Array, cuts: ReadonlyArray<number>) => {
  const points = [0, ...[...cuts].sort((a, b) => a - b), bytes.length]
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end))
}

const decidingReason = (verdicts: ReadonlyArray<{ accepted: boolean; reason: string }>) =>
  (verdicts.find((v) => v.accepted) ?? verdicts[0])?.reason ?? "(no promise)"

describe("the completion rule", () => {
  it("has the cases it is judged by", () => {
    assert.isAtLeast(cases.length, 60)
    assert.isAtLeast(completions.length, 25)
    assert.isAtLeast(nonCompletions.length, 25)
  })

  cases.forEach((c, index) => {
    it(`${c.claimed ? "accepts" : "ignores"} ${c.name}, whole and in random chunks`, () => {
      const options = { token: c.token ?? "COMPLETE", prompt }
      const whole = judgeCompletion(c.text, options)
      assert.strictEqual(whole.claimed, c.claimed, JSON.stringify(whole.verdicts))
      const reason = decidingReason(whole.verdicts)
      if (typeof c.reason === "string") assert.strictEqual(reason, c.reason)
      else assert.match(reason, c.reason)
      assert.strictEqual(whole.occurrences > 0, c.reason !== "(no promise)")
      for (const cuts of randomCuts(c.text, index + 1)) {
        const judge = makeCompletionJudge(options)
        for (const chunk of chunksAt(c.text, cuts)) judge.feed(chunk)
        assert.deepStrictEqual(judge.judgement(), whole)
      }
      // As bytes, whole and cut anywhere (inside characters too).
      const bytes = new TextEncoder().encode(c.text)
      for (const cuts of [[], ...randomCuts(c.text, index + 101).map((cs) => cs.map((cut) => cut % (bytes.length + 1)))]) {
        const judge = makeCompletionJudge(options)
        for (const chunk of byteChunksAt(bytes, cuts)) judge.feedBytes(chunk)
        assert.deepStrictEqual(judge.judgement(), whole)
      }
    })
  })

  it("reads bytes chunk by chunk as it reads text: a label ending one chunk, the promise opening the next", () => {
    const plain = Array.from({ length: 2000 }, (_, i) => `line ${i} of the build log — ünïcödé\n`).join("")
    for (const [label, claimed] of [["Status:", true], ["When every task is done I will output:", false]] as const) {
      const judge = makeCompletionJudge({ token: "COMPLETE", prompt })
      judge.feedBytes(new TextEncoder().encode(`${plain}${label}\n`))
      judge.feedBytes(new TextEncoder().encode(`<promise>COMPLETE</promise>\n${plain}`))
      const expected = judgeCompletion(`${plain}${label}\n<promise>COMPLETE</promise>\n${plain}`, { token: "COMPLETE", prompt })
      assert.strictEqual(judge.judgement().claimed, claimed)
      assert.deepStrictEqual(judge.judgement(), expected)
    }
  })

  it("reads bytes as it reads text where it decodes only the first and last lines of a chunk", () => {
    const promiseLine = promptLines.find((line) => line.includes("<promise>"))!
    const after = promptLines[promptLines.indexOf(promiseLine) + 1]!
    const judged = (chunks: ReadonlyArray<string>) => {
      const judge = makeCompletionJudge({ token: "COMPLETE", prompt })
      for (const chunk of chunks) judge.feedBytes(new TextEncoder().encode(chunk))
      return judge.judgement()
    }
    // Lines inside a code block make it more than the promise (a chunk whose first line is blank).
    assert.isFalse(judged(["```\n", "\nsome words\nmore words\n", "<promise>COMPLETE</promise>\n```\n"]).claimed)
    // The line after an echoed prompt line, past a blank one in the next chunk, still makes it an echo.
    const echo = judged([`${promiseLine}\n`, `\n${after}\nplain words\n`])
    assert.strictEqual(echo.verdicts[0]?.reason, "echo of the prompt")
  })

  it("judges bytes as it judges their text, whatever the lines and wherever the bytes are cut", () => {
    const line = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom("plain words", "  indented", "", "   ", "ünïcödé ☃ 𝄞", "Status:", "I will print it when done:") },
      { weight: 2, arbitrary: fc.constantFrom("<promise>COMPLETE</promise>", "```", "~~~", "Done. <promise>COMPLETE</promise>", "&lt;promise&gt;COMPLETE&lt;/promise&gt;", "x\r", "<promise>") },
      { weight: 2, arbitrary: fc.constantFrom(...promptLines.slice(0, 12)) },
      { weight: 1, arbitrary: fc.constant("a".repeat(70_000)) }
    )
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.boolean(), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 24 }), (lines, newlineAtEnd, cuts) => {
        const text = lines.join("\n") + (newlineAtEnd ? "\n" : "")
        const bytes = new TextEncoder().encode(text)
        const judge = makeCompletionJudge({ token: "COMPLETE", prompt })
        for (const chunk of byteChunksAt(bytes, cuts.map((cut) => Math.floor(cut * bytes.length)))) judge.feedBytes(chunk)
        assert.deepStrictEqual(judge.judgement(), judgeCompletion(text, { token: "COMPLETE", prompt }))
      }),
      { numRuns: 400 }
    )
  })

  it("splits between \\r and \\n, inside a tag and inside the token without changing the verdict", () => {
    const text = "All done.\r\n<promise>COMPLETE</promise>\r\n"
    for (const at of [text.indexOf("\n"), text.indexOf("promise") + 3, text.indexOf("COMPLETE") + 4, text.indexOf("</") + 1]) {
      const judge = makeCompletionJudge({ token: "COMPLETE", prompt })
      judge.feed(text.slice(0, at))
      judge.feed(text.slice(at))
      assert.isTrue(judge.judgement().claimed)
    }
  })

  it("any one claim completes the iteration, wherever it stands, and every occurrence keeps its verdict", () => {
    const judgement = judgeCompletion(
      "I will print <promise>COMPLETE</promise> once done.\nDone now.\n<promise>COMPLETE</promise>\nNote: <promise>DONE</promise>",
      { token: "COMPLETE", prompt }
    )
    assert.isTrue(judgement.claimed)
    assert.deepStrictEqual(judgement.verdicts.map((v) => v.accepted), [false, true, false])
    assert.strictEqual(judgement.occurrences, 3)
  })

  it("keeps at most 20 verdicts of endless output, the claim among them", () => {
    const judge = makeCompletionJudge({ token: "COMPLETE", prompt })
    for (let i = 0; i < 1000; i++) judge.feed("we print <promise>COMPLETE</promise> later\n")
    judge.feed("Done.\n<promise>COMPLETE</promise>\n")
    const judgement = judge.judgement()
    assert.isTrue(judgement.claimed)
    assert.strictEqual(judgement.verdicts.length, 20)
    assert.isTrue(judgement.verdicts.some((v) => v.accepted))
    assert.strictEqual(judgement.occurrences, 1001)
  })

  it("judges a promise at the end of a line far longer than it keeps", () => {
    const text = `${"x".repeat(300_000)}. <promise>COMPLETE</promise>\n`
    const judge = makeCompletionJudge({ token: "COMPLETE", prompt })
    for (let i = 0; i < text.length; i += 10_000) judge.feed(text.slice(i, i + 10_000))
    assert.isTrue(judge.judgement().claimed)
    const mentionEarly = `we print <promise>COMPLETE</promise> later ${"y".repeat(300_000)}\n`
    const early = makeCompletionJudge({ token: "COMPLETE", prompt })
    for (let i = 0; i < mentionEarly.length; i += 10_000) early.feed(mentionEarly.slice(i, i + 10_000))
    assert.deepStrictEqual(early.judgement().verdicts.map((v) => [v.accepted, v.reason]), [[false, `deferred: "later ${"y".repeat(53)}…"`]])
  })
})

describe("echoes of the prompt", () => {
  const judged = (text: string, prompt: string) => judgeCompletion(text, { token: "COMPLETE", prompt })
  const reasons = (text: string, prompt: string) => judged(text, prompt).verdicts.map((v) => v.reason)

  it("are recognised whatever the indentation and the runs of spaces of their lines", () => {
    const rules = "Rules:\n  Print  <promise>COMPLETE</promise>  when done.\n  Never stop early.\n"
    assert.deepStrictEqual(reasons("Print <promise>COMPLETE</promise> when done.\nNever stop early.\n", rules), ["echo of the prompt"])
  })

  it("are not lines whose words run together", () => {
    const rules = "Print <promise>COMPLETE</promise> when done.\nNever stop early.\n"
    const text = "Print<promise>COMPLETE</promise>whendone.\nNeverstopearly.\n"
    assert.deepStrictEqual(judged(text, rules), judged(text, ""))
    assert.deepStrictEqual(reasons(text, rules), ["mentioned inside a sentence"])
  })

  it("span the blank lines of the prompt", () => {
    const rules = "Print <promise>COMPLETE</promise> when done.\n\n\nNever stop early.\n"
    assert.deepStrictEqual(reasons("Print <promise>COMPLETE</promise> when done.\nNever stop early.", rules), ["echo of the prompt"])
  })

  it("span the blank lines of the output", () => {
    const rules = "Print <promise>COMPLETE</promise> when done.\nNever stop early.\n"
    assert.deepStrictEqual(reasons("Print <promise>COMPLETE</promise> when done.\n\n  \nNever stop early.", rules), ["echo of the prompt"])
  })

  it("match a long line by its first 400 characters and its length", () => {
    const long = (end: string) => `Print <promise>COMPLETE</promise> when ${"a".repeat(400)} ${end}.`
    const rules = `${long("done")}\nNever stop early.\n`
    assert.deepStrictEqual(reasons(`${long("gone")}\nNever stop early.`, rules), ["echo of the prompt"])
    assert.notDeepEqual(reasons(`${long("undone")}\nNever stop early.`, rules), ["echo of the prompt"])
    assert.isFalse(judged(`${long("undone")}\nNever stop early.`, rules).claimed)
  })

  it("need a line before or after: the first and the last line of the output stand alone", () => {
    // A prompt holding lines that read "null" pairs no line with the start or the end of the output.
    assert.deepStrictEqual(
      judged("<promise>COMPLETE</promise>", "null\n<promise>COMPLETE</promise>\nnull\n").verdicts,
      [{ accepted: true, reason: "alone on its line", text: "<promise>COMPLETE</promise>" }]
    )
    assert.deepStrictEqual(
      judged("null\n<promise>COMPLETE</promise>", "<promise>COMPLETE</promise>\nThat is all.\n").verdicts,
      [{ accepted: true, reason: "alone on its line", text: "<promise>COMPLETE</promise>" }]
    )
  })
})

describe("the judge's limits", () => {
  const options = { token: "COMPLETE", prompt }

  it("keeps the first 20 verdicts, the last of them given up for the first claim after them", () => {
    const judge = makeCompletionJudge(options)
    for (let i = 0; i < 25; i++) judge.feed(`we print <promise>COMPLETE</promise> later ${i}\n`)
    judge.feed("First. <promise>COMPLETE</promise>\n")
    for (let i = 25; i < 30; i++) judge.feed(`we print <promise>COMPLETE</promise> later ${i}\n`)
    judge.feed("Second. <promise>COMPLETE</promise>\n")
    const judgement = judge.judgement()
    assert.isTrue(judgement.claimed)
    assert.strictEqual(judgement.occurrences, 32)
    assert.deepStrictEqual(
      judgement.verdicts.map((v) => v.text),
      [...Array.from({ length: 19 }, (_, i) => `we print <promise>COMPLETE</promise> later ${i}`), "First. <promise>COMPLETE</promise>"]
    )
    const mentions = makeCompletionJudge(options)
    for (let i = 0; i < 30; i++) mentions.feed(`we print <promise>COMPLETE</promise> later ${i}\n`)
    assert.deepStrictEqual(
      mentions.judgement().verdicts.map((v) => v.text),
      Array.from({ length: 20 }, (_, i) => `we print <promise>COMPLETE</promise> later ${i}`)
    )
  })

  it("counts every occurrence inside a code block, past the verdicts it keeps", () => {
    const block = `\`\`\`\n${"<promise>COMPLETE</promise>\n".repeat(25)}\`\`\`\n`
    const judgement = judgeCompletion(block, options)
    assert.isFalse(judgement.claimed)
    assert.strictEqual(judgement.occurrences, 25)
    assert.strictEqual(judgement.verdicts.length, 20)
    assert.isTrue(judgement.verdicts.every((v) => v.reason === "inside a code block"))
  })

  it("joins a promise split over lines through at most 4096 characters, however its lines are indented", () => {
    const after = (spread: string) => judgeCompletion(`<promise>\n${spread}\nDone. <promise>COMPLETE</promise>`, options).verdicts
    const alone = [{ accepted: true, reason: "after a finished sentence", text: "Done. <promise>COMPLETE</promise>" }]
    // Past 4096 characters the opening tag is given up and the next line judged on its own.
    assert.deepStrictEqual(after("x".repeat(4086)), alone)
    assert.deepStrictEqual(after("x".repeat(5000)), alone)
    assert.notDeepEqual(after("x".repeat(4085)), alone)
    assert.isTrue(judgeCompletion(`Finished.\n<promise>\n${" ".repeat(5000)}COMPLETE\n</promise>`, options).claimed)
  })

  it("waits for the closing tag of an opening tag ending a line of up to 4095 characters", () => {
    assert.strictEqual(judgeCompletion(`${"x".repeat(4086)}<promise>\nCOMPLETE</promise>`, options).occurrences, 1)
    assert.strictEqual(judgeCompletion(`${"x".repeat(4087)}<promise>\nCOMPLETE</promise>`, options).occurrences, 0)
  })
})

describe("the judge fed in chunks", () => {
  const options = { token: "COMPLETE", prompt: "Print <promise>COMPLETE</promise> when done.\nNever stop early.\n" }
  const encode = (text: string) => new TextEncoder().encode(text)
  const asText = (chunks: ReadonlyArray<string>) => {
    const judge = makeCompletionJudge(options)
    for (const chunk of chunks) judge.feed(chunk)
    return judge.judgement()
  }
  const asBytes = (chunks: ReadonlyArray<Uint8Array>) => {
    const judge = makeCompletionJudge(options)
    for (const chunk of chunks) judge.feedBytes(chunk)
    return judge.judgement()
  }

  it("shows the line of an occurrence with its entities decoded", () => {
    assert.deepStrictEqual(judgeCompletion("Tom &amp; Jerry wrote it. <promise>COMPLETE</promise>", options).verdicts, [
      { accepted: true, reason: "after a finished sentence", text: "Tom & Jerry wrote it. <promise>COMPLETE</promise>" }
    ])
  })

  it("finds the line after an echoed line in the next chunk, past blank lines, as text and as bytes", () => {
    const first = "Print <promise>COMPLETE</promise> when done.\n"
    for (const rest of [["\nNever stop early.\nplain words\n"], ["\n\n\nNever stop early.\nplain words\n"], ["\nNever", " stop early.\nplain words\n"]]) {
      const chunks = [first, ...rest]
      assert.deepStrictEqual(asText(chunks).verdicts.map((v) => v.reason), ["echo of the prompt"], JSON.stringify(chunks))
      assert.deepStrictEqual(asBytes(chunks.map(encode)).verdicts.map((v) => v.reason), ["echo of the prompt"], JSON.stringify(chunks))
    }
  })

  it("takes the last non-blank line of a chunk for the line before the next one, as text and as bytes", () => {
    const chunks = ["x\nDo not print:\n\n", "<promise>COMPLETE</promise>\n"]
    for (const judgement of [asText(chunks), asBytes(chunks.map(encode))]) {
      assert.isFalse(judgement.claimed)
      assert.deepStrictEqual(judgement.verdicts.map((v) => v.reason), ['negated: "Do not print"'])
    }
  })

  it("reads a chunk of bytes holding a tag, an entity and carriage returns all together", () => {
    const text = "Tom & Jerry\r\nDone. <promise>COMPLETE</promise>\r\nmore\r\n"
    assert.deepStrictEqual(asBytes([encode(text)]), judgeCompletion(text, options))
    assert.isTrue(asBytes([encode(text)]).claimed)
  })

  it("opens a code block from a chunk of bytes holding both kinds of fence", () => {
    const chunks = ["Log:\n```\nx ~~~ y\n", "Done. <promise>COMPLETE</promise>\n"]
    assert.deepStrictEqual(asBytes(chunks.map(encode)), judgeCompletion(chunks.join(""), options))
    assert.deepStrictEqual(asBytes(chunks.map(encode)).verdicts.map((v) => v.reason), ["inside a code block"])
  })

  it("decodes a character split across chunks of bytes, whichever way each chunk is read", () => {
    const text = "x\nmore\nDo not print déjà vu:\n<promise>COMPLETE</promise>\n"
    const bytes = encode(text)
    const split = bytes.indexOf(0xc3) + 1
    const expected = judgeCompletion(text, options)
    assert.deepStrictEqual(expected.verdicts.map((v) => v.reason), ['negated: "Do not print déjà vu"'])
    // Cut inside the "é", after whole lines, then after a line's first part only.
    assert.deepStrictEqual(asBytes([bytes.subarray(0, split), bytes.subarray(split)]), expected)
    const second = bytes.indexOf(0x0a) + 1
    assert.deepStrictEqual(asBytes([bytes.subarray(0, second), bytes.subarray(second, split), bytes.subarray(split)]), expected)
    const shortText = "x\nDo not print déjà vu:\n<promise>COMPLETE</promise>\n"
    const short = encode(shortText)
    const shortSplit = short.indexOf(0xc3) + 1
    assert.deepStrictEqual(asBytes([short.subarray(0, shortSplit), short.subarray(shortSplit)]), judgeCompletion(shortText, options))
  })

  it("decodes bytes left undecoded at the end as the text would be", () => {
    const bytes = encode("Done. <promise>COMPLETE</promise> é")
    assert.deepStrictEqual(asBytes([bytes.subarray(0, bytes.length - 1)]).verdicts, [
      { accepted: true, reason: "after a finished sentence", text: "Done. <promise>COMPLETE</promise> \ufffd" }
    ])
  })

  it("goes on after a judgement: the line in progress was finished by it", () => {
    const judge = makeCompletionJudge(options)
    judge.feed("Working")
    assert.deepStrictEqual(judge.judgement(), { claimed: false, verdicts: [], occurrences: 0 })
    judge.feed("<promise>COMPLETE</promise>\n")
    assert.deepStrictEqual(judge.judgement().verdicts, [{ accepted: true, reason: "alone on its line", text: "<promise>COMPLETE</promise>" }])
  })

  it("ends a line at a carriage return that ended the chunk before", () => {
    const judgement = asText(["Do not print:\r", "<promise>COMPLETE</promise>\n"])
    assert.deepStrictEqual(judgement, judgeCompletion("Do not print:\r\n<promise>COMPLETE</promise>\n", options))
    assert.deepStrictEqual(judgement.verdicts, [{ accepted: false, reason: 'negated: "Do not print"', text: "<promise>COMPLETE</promise>" }])
  })

  it("ends a line at a carriage return within a chunk of ordinary lines, as a progress bar redraws its line", () => {
    const chunks = ["Working.\n> 40% done\r ", "<promise>COMPLETE</promise>\n"]
    const judgement = asText(chunks)
    assert.deepStrictEqual(judgement, judgeCompletion(chunks.join(""), options))
    assert.deepStrictEqual(judgement.verdicts, [{ accepted: true, reason: "alone on its line", text: "<promise>COMPLETE</promise>" }])
  })

  it("takes a code block whose long line has words before the promise for more than the promise", () => {
    const judgement = asText(["```\n", "x".repeat(70000), `${" ".repeat(5000)}<promise>COMPLETE</promise>\n\`\`\`\n`])
    assert.deepStrictEqual(judgement.verdicts.map((v) => v.reason), ["inside a code block"])
  })

  it("changes nothing for an empty chunk or for bytes, even after a line longer than it keeps", () => {
    const chunks = ["```\n", `\n\n${" ".repeat(70000)}`, "<promise>COMPLETE</promise>\n```\n"]
    const judgement = asText(chunks)
    assert.deepStrictEqual(judgement.verdicts.map((v) => v.reason), ["a code block holding only the promise"])
    assert.deepStrictEqual(asText(["", ...chunks.flatMap((chunk) => [chunk, ""])]), judgement)
    assert.deepStrictEqual(asBytes(chunks.map(encode)), judgement)
  })

  it("keeps a line of whitespace longer than it keeps blank, whether it comes whole or in pieces", () => {
    const spaces = " ".repeat(70000)
    const whole = asText(["```\n", `\n\n${spaces}`, "<promise>COMPLETE</promise>\n```\n"])
    assert.deepStrictEqual(whole.verdicts.map((v) => v.reason), ["a code block holding only the promise"])
    const pieces = ["```\n", "\n\n", ...Array.from({ length: 7 }, () => spaces.slice(0, 10000)), "<promise>COMPLETE</promise>\n```\n"]
    assert.deepStrictEqual(asText(pieces), whole)
    assert.deepStrictEqual(asBytes(pieces.map(encode)), whole)
  })

  it("judges at the end a line left open by a stray opening tag", () => {
    assert.deepStrictEqual(judgeCompletion("Done. <promise>COMPLETE</promise> <promise>", options).verdicts, [
      { accepted: false, reason: "mentioned inside a sentence", text: "Done. <promise>COMPLETE</promise> <promise>" }
    ])
  })

  it("judges a line longer than it keeps in windows: the words before the kept part stand as one mark", () => {
    const pad = " ".repeat(4096 - "<promise>COMPLETE</promise>".length)
    // The promise starts the kept part: it is judged once, after the mark.
    const atCut = asText([`${"z ".repeat(35000)}Done. <promise>COMPLETE</promise>${pad}`, "\n"])
    assert.strictEqual(atCut.occurrences, 1)
    assert.deepStrictEqual(atCut.verdicts.map((v) => v.text), ["…<promise>COMPLETE</promise>"])
    // A line of exactly 64 KiB is kept whole.
    const whole = asText([`${"z ".repeat(30717)}Done. <promise>COMPLETE</promise>${pad}`, "\n"])
    assert.deepStrictEqual(whole.verdicts.map((v) => v.reason), ["after a finished sentence"])
    // Inside the kept part: judged once, with the words before it.
    const inside = asText([`${"z ".repeat(35000)}Done. <promise>COMPLETE</promise>${" ".repeat(100)}`, "\n"])
    assert.strictEqual(inside.occurrences, 1)
    assert.deepStrictEqual(inside.verdicts.map((v) => v.reason), ["after a finished sentence"])
    assert.match(inside.verdicts[0]!.text, /^… z z z .* Done\. <promise>/)
    // At the start of the line: judged with the line before.
    // (Ending in the mark's own character: whether a line was cut before is read from its start.)
    const first = asText([`Do not print:\n<promise>COMPLETE</promise> ${"z ".repeat(40000)}…`])
    assert.deepStrictEqual(first.verdicts.map((v) => v.reason), ['negated: "Do not print"'])
  })

  it("judges a promise that closes on its own line by that line alone: the next line does not join it", () => {
    const judge = makeCompletionJudge({ token: "COMPLETE", prompt })
    judge.feed("<promise>COMPLETE</promise>\nNext I will tidy the README.\n")
    assert.deepStrictEqual(judge.judgement().verdicts, [{ accepted: true, reason: "alone on its line", text: "<promise>COMPLETE</promise>" }])
  })

  it("joins a promise whose tags span lines whatever their case", () => {
    const judge = makeCompletionJudge({ token: "COMPLETE", prompt })
    judge.feed("All tasks are done.\n<PROMISE>\nCOMPLETE\n</Promise>\n")
    assert.isTrue(judge.judgement().claimed)
  })
})
