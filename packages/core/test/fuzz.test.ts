import { NodeContext } from "@effect/platform-node"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Arbitrary, Cause, Effect, Either, Exit, FastCheck as fc, Layer, Option, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type CompletionJudgement, judgeCompletion, makeCompletionJudge } from "../src/completion/CompletionJudge.js"
import { ChangeId, IterationRecord, LoopState } from "../src/domain/Domain.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import { ENTRY_DELIMITER, formatEntry, type JournalEntry, parseEntries } from "../src/state/JournalEntry.js"
import type { StateError } from "../src/state/StateError.js"
import { currentTask, formatProgress, openTaskCount, parseTasks, type TaskList, type TaskStatus, taskSection } from "../src/prompt/Tasks.js"
import { Workspace } from "../src/state/Workspace.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"

// Pure properties run thousands of times; the ones on disk a few hundred. Lengths use `size: "max"`:
// fast-check's default size keeps strings and arrays to about ten items whatever `maxLength` says.
// Under mutation testing (`pnpm mutate`, whose workers set STRYKER_MUTATOR_WORKER) each property
// runs a twentieth as often: every mutant runs these again, and a few dozen cases still find most.
const runs = (n: number): number => (process.env.STRYKER_MUTATOR_WORKER === undefined ? n : Math.max(5, Math.ceil(n / 20)))
const MANY = { fastCheck: { numRuns: runs(2000) } }
const DISK = { timeout: 60_000, fastCheck: { numRuns: runs(300) } }

// Under mutation testing (`pnpm mutate`) the properties run from one fixed seed: a mutant's result
// then depends on the code and the tests alone, as a run that keeps earlier results assumes.
if (process.env.STRYKER_MUTATOR_WORKER !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: 25 })

// ---------------------------------------------------------------------------------------------
// Shared generators

/** Any UTF-16 code unit, lone surrogates included (fast-check's "binary" unit never makes them). */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
const anyText = (maxLength = 300) =>
  fc.oneof(
    fc.string({ unit: "binary", maxLength, size: "max" }),
    fc.string({ unit: codeUnit, maxLength, size: "max" }),
    fc.string({ unit: "grapheme", maxLength, size: "max" })
  )
/** Every character JavaScript's `\s` (and `String.prototype.trim`) treats as whitespace, and a few it does not. */
const jsWhitespace = [" ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"]

/** Splits `text` at arbitrary positions (empty chunks included). */
const chunksOf = (text: string, cuts: ReadonlyArray<number>) => {
  const points = cuts.map((n) => n % (text.length + 1)).sort((a, b) => a - b)
  const chunks: Array<string> = []
  let start = 0
  for (const point of points) {
    chunks.push(text.slice(start, point))
    start = point
  }
  chunks.push(text.slice(start))
  return chunks
}
const cutsArb = fc.array(fc.nat(), { maxLength: 60 })

/** Feeds chunks one by one and returns the judgement. */
const judgeChunks = (token: string, chunks: ReadonlyArray<string>, prompt = ""): CompletionJudgement => {
  const judge = makeCompletionJudge({ token, prompt })
  for (const chunk of chunks) judge.feed(chunk)
  return judge.judgement()
}
const judgeWhole = (token: string, text: string, prompt = "") => judgeCompletion(text, { token, prompt })

// ---------------------------------------------------------------------------------------------
// Completion judge

const metaToken = fc.string({
  unit: fc.constantFrom(..."\\^$.*+?()[]{}|/-", "a", "Z", "0", " ", "\u00e9", "\u{1F600}"),
  minLength: 1,
  maxLength: 12
})
/** Any token at all, blank ones included. */
const anyToken = fc.oneof(
  fc.constantFrom("COMPLETE", "a.b", ".*", "(x|y)", "[A-Z]+", "\\d", "$&", "^$", "a b", "  padded\t", "", " "),
  metaToken,
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: codeUnit, maxLength: 12 })
)
/** Tokens `LoopOptions` accepts: trimmed, non-empty, without `<` or `>`. */
const validToken = fc.oneof(anyToken, metaToken).map((t) => t.trim()).filter((t) => t !== "" && !/[<>&`*_~]/.test(t))

const indent = fc.string({ unit: fc.constantFrom(" ", "\t"), maxLength: 20 })
const inside = fc.string({ unit: fc.constantFrom(...jsWhitespace), maxLength: 20 })

/** Pieces of text: whole promises, promises broken by one character, tags, whitespace, line breaks, fences, noise. */
const promiseish = (token: string) =>
  fc.oneof(
    fc
      .tuple(fc.boolean(), indent, inside, inside, fc.option(fc.tuple(fc.constantFrom("x", "\r", "<", "\u200b", "\n"), fc.nat()), { freq: 3 }))
      .map(([newline, indent, before, after, breaker]) => {
        const promise = `${newline ? "\n" : ""}${indent}<promise>${before}${token}${after}</promise>`
        if (breaker === null) return promise
        const at = breaker[1] % (promise.length + 1)
        return promise.slice(0, at) + breaker[0] + promise.slice(at)
      }),
    fc.constantFrom("\n", "\r\n", "\r", " ", "\t", "\u00a0", "\u2028", "<promise>", "</promise>", "<promise", "promise>", "</", "<", "x"),
    fc.constantFrom("Done.", "Status:", "I will print", "once the tests pass", "```", "```\n", "> ", "**", "`", "&lt;", "\x1b[32m"),
    fc.constant(token),
    fc.constant(token.slice(0, Math.ceil(token.length / 2))),
    fc.string({ unit: fc.constantFrom(...jsWhitespace), maxLength: 6 }),
    anyText(8)
  )

/** Words that never finish a sentence or end in a label: a promise after them is a mention. */
const midSentence = fc.constantFrom("I will print", "once done I output", "you can emit", "the loop stops on", "never say", "we print", "remember that")

describe("completion judge under random input", () => {
  it.prop(
    "never throws on arbitrary text in arbitrary chunks, for any token, and judges it as the whole text",
    { token: anyToken, text: fc.oneof(anyText(600), fc.constant("")), prompt: anyText(200), cuts: cutsArb },
    ({ cuts, prompt, text, token }) => {
      const whole = judgeWhole(token, text, prompt)
      assert.isBoolean(whole.claimed)
      assert.deepStrictEqual(judgeChunks(token, chunksOf(text, cuts), prompt), whole)
    },
    MANY
  )

  it.prop(
    "never throws on huge lines of arbitrary characters",
    { token: validToken, unit: anyText(4), size: fc.integer({ min: 10_000, max: 200_000 }), cuts: cutsArb },
    ({ cuts, size, token, unit }) => {
      const text = `<promise>${unit.repeat(Math.ceil(size / Math.max(1, unit.length)))}\n`
      assert.isBoolean(judgeChunks(token, chunksOf(text, cuts)).claimed)
    },
    { fastCheck: { numRuns: runs(200) } }
  )

  it.prop(
    "gives the same judgement however promise-like text is chunked",
    {
      input: validToken.chain((token) => fc.tuple(fc.constant(token), fc.array(promiseish(token), { maxLength: 40, size: "max" }))),
      cuts: cutsArb
    },
    ({ cuts, input: [token, pieces] }) => {
      const text = pieces.join("")
      assert.deepStrictEqual(judgeChunks(token, chunksOf(text, cuts)), judgeWhole(token, text))
    },
    MANY
  )

  it.prop(
    "accepts a promise alone on its line after a finished sentence, with any whitespace around the token, under any chunking",
    {
      sentence: fc.constantFrom("All tasks are done.", "Everything passes!", "Done", "I wrote hello.txt and the tests pass."),
      indent,
      before: inside,
      token: validToken,
      after: inside,
      newline: fc.constantFrom("\n", "\r\n", "\n\n"),
      suffix: fc.constantFrom("", "\n", "\nThanks.\n", " 🎉\n"),
      cuts: cutsArb
    },
    ({ after, before, cuts, indent, newline, sentence, suffix, token }) => {
      const text = `${sentence}${newline}${indent}<promise>${before}${token}${after}</promise>${suffix}`
      assert.isTrue(judgeWhole(token, text).claimed)
      assert.isTrue(judgeChunks(token, chunksOf(text, cuts)).claimed)
    },
    MANY
  )

  it.prop(
    "never accepts a promise mentioned inside a sentence",
    { words: midSentence, token: validToken, inside, tail: fc.constantFrom("", " once the tests pass", " when done", " to stop"), cuts: cutsArb },
    ({ cuts, inside, tail, token, words }) => {
      const text = `${words} <promise>${inside}${token}${inside}</promise>${tail}\n`
      const judgement = judgeChunks(token, chunksOf(text, cuts))
      assert.isFalse(judgement.claimed)
      assert.strictEqual(judgement.occurrences, 1)
    },
    MANY
  )

  it.prop(
    "still accepts a final promise after megabytes of random chunks, a huge line included",
    {
      token: validToken,
      // Noise without fences: a block opened by the noise would rightly hide the claim.
      chunks: fc.array(fc.tuple(anyText(40).filter((t) => !/[`~]/.test(t)), fc.integer({ min: 1, max: 20_000 })), { minLength: 1, maxLength: 40 }),
      cuts: fc.array(fc.nat(), { maxLength: 10 })
    },
    ({ chunks, cuts, token }) => {
      const judge = makeCompletionJudge({ token, prompt: "" })
      for (const [unit, times] of chunks) judge.feed(unit.repeat(times))
      // Close whatever the noise opened (a line, a promise tag) before the real claim.
      for (const chunk of chunksOf(`\n</promise>\n\n\nAll done.\n<promise> ${token} </promise>\n`, cuts)) judge.feed(chunk)
      assert.isTrue(judge.judgement().claimed)
    },
    { timeout: 60_000, fastCheck: { numRuns: runs(60) } }
  )

  it("reads 50 MB of promise-like lines in 1 MB chunks and accepts the promise at the very end", () => {
    const judge = makeCompletionJudge({ token: "COMPLETE", prompt: "" })
    const chunk = "words and \n<promise> more words\t ".repeat(32 * 1024).slice(0, 1024 * 1024)
    for (let i = 0; i < (process.env.STRYKER_MUTATOR_WORKER === undefined ? 50 : 5); i++) judge.feed(chunk)
    judge.feed("</promise>\nAll done.\n<promise>COMPLETE</promise>")
    const judgement = judge.judgement()
    assert.isTrue(judgement.claimed)
    assert.isAtMost(judgement.verdicts.length, 20)
  }, 60_000)
})

// ---------------------------------------------------------------------------------------------
// tasks.md parser

const statuses: ReadonlyArray<TaskStatus> = ["pending", "in-progress", "complete", "shelved"]
const knownMarkers: ReadonlyArray<readonly [string, TaskStatus]> = [
  [" ", "pending"],
  ["", "pending"],
  ["x", "complete"],
  ["X", "complete"],
  ["~", "in-progress"],
  [">", "in-progress"],
  ["/", "in-progress"],
  ["-", "shelved"]
]
const isOpen = (status: TaskStatus) => status === "pending" || status === "in-progress"

const checkTaskList = (text: string, list: TaskList) => {
  const lines = text.split(/\r?\n/)
  let previous = 0
  for (const task of list.tasks) {
    assert.isString(task.id)
    assert.notStrictEqual(task.id, "")
    assert.include(statuses, task.status)
    assert.isTrue(Number.isInteger(task.line) && task.line > previous && task.line <= lines.length, `line ${task.line}`)
    assert.match(lines[task.line - 1]!.trimStart(), /^[-*+#]/, "a task comes from a checkbox or a heading line")
    assert.notMatch(task.description, /[\r\n\u2028\u2029]/, "a description stays on one line")
    previous = task.line
  }
  assert.isAtMost(list.tasks.length, 5000)
  const open = list.tasks.filter((task) => isOpen(task.status))
  assert.strictEqual(openTaskCount(list), open.length)
  assert.isAtMost(openTaskCount(list), list.tasks.length)
  assert.strictEqual(currentTask(list), open[0] ?? null)
  const complete = list.tasks.filter((task) => task.status === "complete").length
  const shelved = list.tasks.filter((task) => task.status === "shelved").length
  assert.strictEqual(formatProgress(list), `${complete}/${list.tasks.length} complete${shelved > 0 ? `, ${shelved} shelved` : ""}`)
  const section = taskSection(list)
  if (list.tasks.length === 0) assert.isNull(section)
  else assert.include(section, formatProgress(list))
}

const marker = fc.oneof(fc.constantFrom(...knownMarkers.map(([m]) => m)), fc.constantFrom("?", "]", "[", "a", "**"), codeUnit)
const taskNumber = fc.array(fc.nat(99), { minLength: 1, maxLength: 4 }).map((parts) => parts.join("."))
const oneLineText = (maxLength = 40) =>
  fc.oneof(fc.string({ unit: "grapheme", maxLength }), anyText(maxLength)).map((s) => s.replace(/[\r\n\u2028\u2029]/g, " "))
const bullet = fc.constantFrom("-", "*", "+")
const lineIndent = fc.string({ unit: fc.constantFrom(" ", "\t"), maxLength: 6 })

const markdownLine = fc.oneof(
  fc
    .tuple(lineIndent, bullet, marker, fc.option(taskNumber), fc.constantFrom("", ".", ":", ")"), anyText(40))
    .map(([i, b, m, n, sep, rest]) => `${i}${b} [${m}] ${n === null ? "" : `${n}${sep} `}${rest}`),
  fc
    .tuple(fc.integer({ min: 1, max: 7 }), fc.constantFrom("Task", "task", "TASK", "Tusk"), taskNumber, fc.constantFrom("", ":", ".", "-", " -"), anyText(40))
    .map(([h, word, n, sep, rest]) => `${"#".repeat(h)} ${word} ${n}${sep} ${rest}`),
  fc.tuple(fc.constantFrom("- ", "* ", "", "  - "), marker, anyText(20)).map(([lead, m, rest]) => `${lead}**Status**: [${m}] ${rest}`),
  fc.constantFrom("", "# Tasks", "## Wave 1", "- **Files**: src/a.ts", "---", "  ", "- [x]", "- []", "### Task", "-[x] 1 no space"),
  anyText(80)
)

describe("tasks.md parser under random input", () => {
  it.prop(
    "never throws on arbitrary text, and every task it finds is well-formed",
    { text: anyText(2000) },
    ({ text }) => checkTaskList(text, parseTasks(text)),
    MANY
  )

  it.prop(
    "never throws on markdown mixing checkboxes, task headings and status lines, and every task it finds is well-formed",
    { lines: fc.array(markdownLine, { maxLength: 60, size: "max" }), eol: fc.constantFrom("\n", "\r\n"), trailing: fc.boolean() },
    ({ eol, lines, trailing }) => {
      const text = lines.join(eol) + (trailing ? eol : "")
      checkTaskList(text, parseTasks(text))
    },
    MANY
  )

  type Item =
    | { readonly kind: "checkbox"; readonly indent: string; readonly bullet: string; readonly marker: string; readonly number: string | null; readonly sep: string; readonly description: string }
    | { readonly kind: "heading"; readonly hashes: number; readonly number: string; readonly name: string; readonly fields: number; readonly status: string | null }
    | { readonly kind: "prose"; readonly text: string }

  const description = oneLineText().filter((d) => d.trim() !== "")
  const item: fc.Arbitrary<Item> = fc.oneof(
    fc.record({
      kind: fc.constant("checkbox" as const),
      indent: lineIndent,
      bullet,
      marker: fc.constantFrom(...knownMarkers.map(([m]) => m)),
      number: fc.option(taskNumber),
      sep: fc.constantFrom("", ".", ":", ")"),
      description
    }).filter((c) => c.number !== null || !/^(?:task[ \t]+)?\d/i.test(c.description.trim())),
    fc.record({
      kind: fc.constant("heading" as const),
      hashes: fc.integer({ min: 2, max: 6 }),
      number: taskNumber,
      name: oneLineText(),
      fields: fc.nat(3),
      status: fc.option(fc.constantFrom(...knownMarkers.map(([m]) => m)))
    }),
    fc.record({ kind: fc.constant("prose" as const), text: fc.constantFrom("", "# Tasks", "## Wave 2", "Some prose.", "---") })
  )
  const statusOf = new Map(knownMarkers)

  it.prop(
    "reads back the id, status and description of every generated task, in order",
    { items: fc.array(item, { maxLength: 40, size: "max" }), eol: fc.constantFrom("\n", "\r\n") },
    ({ eol, items }) => {
      const lines: Array<string> = []
      const headings: Array<[string, TaskStatus, string, number]> = []
      const boxes: Array<[string, TaskStatus, string, number]> = []
      items.forEach((item) => {
        if (item.kind === "prose") lines.push(item.text)
        else if (item.kind === "checkbox") {
          const { bullet, description, indent, marker, number, sep } = item
          lines.push(`${indent}${bullet} [${marker}] ${number === null ? "" : `${number}${sep} `}${description}`)
          boxes.push([number ?? `line ${lines.length}`, statusOf.get(marker)!, description.trim(), lines.length])
        } else {
          const { fields, hashes, name, number } = item
          lines.push(`${"#".repeat(hashes)} Task ${number}: ${name}`)
          const line = lines.length
          for (let f = 0; f < fields; f++) {
            if (f % 2 === 0) lines.push("- **Files**: src/a.ts")
            else {
              lines.push("  - [ ] a sub-step of the task")
              boxes.push([`line ${lines.length}`, "pending", "a sub-step of the task", lines.length])
            }
          }
          if (item.status !== null) lines.push(`- **Status**: [${item.status}] whatever`)
          headings.push([number, item.status === null ? "pending" : statusOf.get(item.status)!, name.trim() || `Task ${number}`, line])
        }
      })
      // A file with task headings is read in the structured form (its checkboxes are sub-items),
      // unless no heading has a status line while checkboxes exist: then those hold the statuses.
      const hasStatus = items.some((item) => item.kind === "heading" && item.status !== null)
      const expected = headings.length > 0 && (hasStatus || boxes.length === 0) ? headings : boxes
      const parsed = parseTasks(lines.join(eol)).tasks.map((t) => [t.id, t.status, t.description, t.line])
      assert.deepStrictEqual(parsed, expected)
    },
    MANY
  )

  // Found by this file: the heading pattern used to backtrack cubically over a long whitespace run
  // followed by a lone "\r" (or U+2028/U+2029): seconds a line. The test timeout is the guard; the
  // status, fence and task number patterns get the same long lines.
  it("parses task headings, checkboxes, status lines and fences with long runs and lone line separators", () => {
    const headings = parseTasks(Array.from({ length: 100 }, (_, i) => `## Task ${i}.1${" ".repeat(1980)}x\ry`).join("\n")).tasks
    assert.strictEqual(headings.length, 100)
    assert.deepStrictEqual([headings[0]!.id, headings[0]!.description], ["0.1", "x y"])
    const boxes = parseTasks(Array.from({ length: 100 }, () => `- [ ]${" ".repeat(1990)}\u2028z`).join("\n")).tasks
    assert.strictEqual(boxes.length, 100)
    assert.strictEqual(boxes[99]!.description, "z")
    const statuses = parseTasks(`### Task 1: a\n${Array.from({ length: 100 }, () => `- **Status**:${" ".repeat(1985)}\r`).join("\n")}`).tasks
    assert.deepStrictEqual(statuses.map((t) => t.status), ["pending"])
    // Backticks with a backtick after them open no fence; a run of tildes does, until as long a run.
    const fences = parseTasks(
      Array.from({ length: 100 }, (_, i) =>
        i % 2 === 0 ? `${"`".repeat(1990)}x\`\n- [ ] ${i} open` : `${"~".repeat(1990)}\r\n- [ ] ${i} hidden\n${"~".repeat(1990)}${" ".repeat(9)}`
      ).join("\n")
    ).tasks
    assert.deepStrictEqual(fences.map((t) => t.id), Array.from({ length: 50 }, (_, i) => String(2 * i)))
    const numbers = parseTasks(Array.from({ length: 100 }, () => `## Task ${"1.".repeat(995)}a`).join("\n")).tasks
    assert.strictEqual(numbers.length, 0)
  }, 10_000)
})

// ---------------------------------------------------------------------------------------------
// State and history decoders

const decodeState = Schema.decodeUnknownEither(Schema.parseJson(LoopState))
const decodeRecord = Schema.decodeUnknownEither(Schema.parseJson(IterationRecord))
const encodeState = Schema.encodeSync(LoopState)
const encodeRecord = Schema.encodeSync(IterationRecord)

/** JSON has no NaN, Infinity or -0: values holding them cannot round-trip through a JSON file. */
const jsonFaithful = (value: unknown): boolean =>
  typeof value === "number"
    ? Number.isFinite(value) && !Object.is(value, -0)
    : typeof value === "object" && value !== null
    ? Object.values(value).every(jsonFaithful)
    : true

const validState = Arbitrary.make(LoopState).filter(jsonFaithful)
const validRecord = Arbitrary.make(IterationRecord).filter(jsonFaithful)

/** Valid JSON text, cut short, spliced or with a field replaced, as a crash or a hand edit leaves it. */
const mangled = <A>(valid: fc.Arbitrary<A>, encode: (a: A) => unknown) =>
  fc.oneof(
    fc.tuple(valid, fc.nat()).map(([v, n]) => {
      const text = JSON.stringify(encode(v))
      return text.slice(0, n % text.length)
    }),
    fc.tuple(valid, fc.nat(), anyText(20)).map(([v, n, noise]) => {
      const text = JSON.stringify(encode(v))
      const at = n % text.length
      return text.slice(0, at) + noise + text.slice(at)
    }),
    fc.tuple(valid, fc.nat(), fc.jsonValue()).map(([v, n, replacement]) => {
      const encoded = encode(v) as Record<string, unknown>
      const keys = Object.keys(encoded)
      return JSON.stringify({ ...encoded, [keys[n % keys.length]!]: replacement })
    })
  )

const garbage = fc.oneof(
  anyText(400),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  mangled(validState, encodeState),
  mangled(validRecord, encodeRecord)
)

/** A Left must also describe itself: HistoryStore puts the message in the StateError. */
const checkDecoded = (result: Either.Either<unknown, { readonly message: string }>) => {
  if (Either.isLeft(result)) assert.isString(result.left.message)
}

describe("state and history decoders under random input", () => {
  it.prop(
    "never throw on arbitrary text, JSON values or non-strings, and always describe a failure",
    { input: fc.oneof(garbage, fc.anything()) },
    ({ input }) => {
      checkDecoded(decodeState(input))
      checkDecoded(decodeRecord(input))
    },
    MANY
  )

  it.prop(
    "read back every valid state and record written as JSON",
    { state: validState, record: validRecord },
    ({ record, state }) => {
      assert.deepStrictEqual(decodeState(JSON.stringify(encodeState(state), null, 2)), Either.right(state))
      assert.deepStrictEqual(decodeRecord(JSON.stringify(encodeRecord(record))), Either.right(record))
    },
    MANY
  )

  it.prop(
    "reject a valid state or record cut short anywhere",
    { state: validState, record: validRecord, at: fc.nat() },
    ({ at, record, state }) => {
      const stateText = JSON.stringify(encodeState(state))
      const recordText = JSON.stringify(encodeRecord(record))
      assert.isTrue(Either.isLeft(decodeState(stateText.slice(0, at % stateText.length))))
      assert.isTrue(Either.isLeft(decodeRecord(recordText.slice(0, at % recordText.length))))
    },
    MANY
  )
})

const root = fs.mkdtempSync(path.join(os.tmpdir(), "spool-fuzz-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
fs.mkdirSync(path.join(root, ".spool/changes/001-01_x"), { recursive: true })
const changeId = ChangeId.make("001-01_x")
const stateDir = path.join(root, ".spool/.state/ralph/001-01_x")
fs.mkdirSync(stateDir, { recursive: true })
const stateFile = path.join(stateDir, "state.json")
const historyFile = path.join(stateDir, "history.jsonl")

/** The failure, if any, is a StateError: never a defect. */
const typedFailure = <A>(exit: Exit.Exit<A, StateError>): StateError | null => {
  if (Exit.isSuccess(exit)) return null
  assert.isTrue(Cause.isFailType(exit.cause), `expected a StateError, got:\n${Cause.pretty(exit.cause)}`)
  return Option.getOrThrow(Cause.failureOption(exit.cause))
}

/** The last `limit` non-blank lines of the file, as the store sees them: UTF-8 decoded (lone surrogates became U+FFFD). */
const lastLines = (limit: number) =>
  new TextDecoder().decode(fs.readFileSync(historyFile)).split("\n").filter((line) => line.trim() !== "").slice(-limit)

const checkTail = (tail: { readonly records: ReadonlyArray<IterationRecord>; readonly skipped: number }, lines: ReadonlyArray<string>) => {
  const decoded = lines.map((line) => decodeRecord(line))
  assert.deepStrictEqual(tail.records, decoded.filter(Either.isRight).map((r) => r.right))
  assert.strictEqual(tail.skipped, decoded.filter(Either.isLeft).length)
}

const stateContent = fc.oneof(
  garbage,
  fc.uint8Array({ maxLength: 400, size: "max" }),
  validState.map((s) => JSON.stringify(encodeState(s)))
)
const historyLine = fc.oneof(
  { weight: 2, arbitrary: validRecord.map((r) => JSON.stringify(encodeRecord(r))) },
  { weight: 2, arbitrary: garbage.map((s) => s.replaceAll("\n", "")) },
  { weight: 1, arbitrary: fc.constantFrom("", "  ", "\r", "{", "null", "[]") }
)
/** Lines of a few kilobytes, so that a history of a few dozen lines spans several 64 KiB blocks. */
const longHistoryLine = fc.oneof(
  validRecord.chain((r) => fc.nat(8000).map((n) => JSON.stringify(encodeRecord({ ...r, warnings: ["w".repeat(n)] })))),
  fc.tuple(anyText(4), fc.nat(8000)).map(([unit, n]) => unit.repeat(n).replaceAll("\n", ""))
)

layer(HistoryStore.layer.pipe(Layer.provideMerge(Workspace.layer(root)), Layer.provideMerge(NodeContext.layer)))(
  "HistoryStore on disk under random files",
  (it) => {
    it.effect.prop(
      "readState returns a valid state or a StateError naming state.json, whatever the file holds",
      { content: stateContent },
      ({ content }) =>
        Effect.gen(function*() {
          fs.writeFileSync(stateFile, content)
          const text = new TextDecoder().decode(fs.readFileSync(stateFile))
          const exit = yield* Effect.exit((yield* HistoryStore).readState(changeId))
          const error = typedFailure(exit)
          if (error === null) {
            const state = Option.getOrThrow(Exit.isSuccess(exit) ? exit.value : Option.none())
            assert.isTrue(Schema.is(LoopState)(state))
            return
          }
          assert.strictEqual(error._tag, "StateError")
          assert.strictEqual(error.path, stateFile)
          assert.strictEqual(error.reason, text.includes("\u0000") ? "NotText" : "Decode")
          assert.include(error.message, stateFile)
          assert.notInclude(error.message, "\n")
        }),
      DISK
    )

    it.effect.prop(
      "recent keeps every line that decodes, in order, and counts every other non-blank line as skipped",
      { lines: fc.array(historyLine, { maxLength: 30, size: "max" }), trailing: fc.boolean(), limit: fc.integer({ min: 1, max: 40 }) },
      ({ limit, lines, trailing }) =>
        Effect.gen(function*() {
          fs.writeFileSync(historyFile, lines.join("\n") + (trailing ? "\n" : ""))
          const exit = yield* Effect.exit((yield* HistoryStore).recent(changeId, limit))
          assert.isNull(typedFailure(exit), "garbage lines are skipped, not an error")
          if (Exit.isSuccess(exit)) checkTail(exit.value, lastLines(limit))
        }),
      DISK
    )

    it.effect.prop(
      "recent reads the last lines of a history spanning many blocks, whatever the lines hold",
      {
        lines: fc.array(fc.oneof(historyLine, longHistoryLine), { minLength: 20, maxLength: 60, size: "max" }),
        trailing: fc.boolean(),
        limit: fc.integer({ min: 1, max: 15 })
      },
      ({ limit, lines, trailing }) =>
        Effect.gen(function*() {
          // Blank lines are left out here: see the skipped test below.
          fs.writeFileSync(historyFile, lines.filter((line) => line.trim() !== "").join("\n") + (trailing ? "\n" : ""))
          const exit = yield* Effect.exit((yield* HistoryStore).recent(changeId, limit))
          assert.isNull(typedFailure(exit), "garbage lines are skipped, not an error")
          if (Exit.isSuccess(exit)) checkTail(exit.value, lastLines(limit))
        }),
      { timeout: 60_000, fastCheck: { numRuns: runs(100) } }
    )

    // Found by this file: the tail reader used to count blank lines towards the limit.
    it.effect("recent returns the last records of a long history whose end is blank lines", () =>
      Effect.gen(function*() {
        const lines = Array.from({ length: 3 }, (_, i) => JSON.stringify(encodeRecord(iterationRecord({ iteration: i + 1 }))))
        fs.writeFileSync(historyFile, lines.join("\n") + "\n".repeat(70_000))
        const tail = yield* (yield* HistoryStore).recent(changeId, 10)
        assert.deepStrictEqual(tail.records.map((r) => r.iteration), [1, 2, 3])
      }))

    // Found by this file: formatting the ParseError of a deeply nested value overflows the stack.
    it.effect("reports a deeply nested state.json as damaged, not as a defect", () =>
      Effect.gen(function*() {
        fs.writeFileSync(stateFile, `${"[".repeat(10_000)}${"]".repeat(10_000)}`)
        const error = typedFailure(yield* Effect.exit((yield* HistoryStore).readState(changeId)))
        assert.strictEqual(error?.reason, "Decode")
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// Error journal reader

const streamLine = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: codeUnit, maxLength: 30, size: "max" }).map((s) => s.replaceAll("\n", "")) },
  { weight: 1, arbitrary: fc.constantFrom(ENTRY_DELIMITER, "```", "```text", "````", "`", "### stderr", "### stdout", "- run: fake", "- time: x", "", " ", "\r") }
)
/** Process output: empty, or any lines; the journal stores it with a final newline. */
const stream = fc.oneof(
  fc.constant(""),
  fc.tuple(fc.array(streamLine, { minLength: 1, maxLength: 8, size: "max" }), fc.boolean()).map(([lines, newline]) => lines.join("\n") + (newline ? "\n" : ""))
)
const withFinalNewline = (text: string) => (text === "" || text.endsWith("\n") ? text : `${text}\n`)
/** What the journal keeps of a task field: one line, single spaces, and "none" stands for null. */
const taskField = fc.option(
  oneLineText(30).map((s) => s.replace(/\s+/g, " ").trim()).filter((s) => s !== "none")
)
const exitArb = fc.oneof(
  fc.integer().map((exitCode) => ({ exitCode, signal: null, timedOut: false })),
  fc.string({ unit: fc.constantFrom(..."SIGKLTERMHUP_0123"), minLength: 1, maxLength: 8 }).map((signal) => ({ exitCode: null, signal, timedOut: false })),
  fc.constant({ exitCode: null, signal: null, timedOut: true }),
  fc.constant({ exitCode: null, signal: null, timedOut: false })
)
const journalEntry: fc.Arbitrary<JournalEntry> = fc
  .record({
    timestamp: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    run: oneLineText(30),
    iteration: fc.integer(),
    exit: exitArb,
    error: taskField,
    taskId: taskField,
    taskDescription: taskField,
    stderr: stream,
    stdout: stream
  })
  .map(({ exit, ...rest }) => ({ ...rest, ...exit }))

describe("error journal reader under random input", () => {
  it.prop(
    "reads back every entry it wrote, output ending with a newline",
    { entries: fc.array(journalEntry, { maxLength: 5 }) },
    ({ entries }) => {
      const expected = entries.map((e) => ({ ...e, stderr: withFinalNewline(e.stderr), stdout: withFinalNewline(e.stdout) }))
      assert.deepStrictEqual(parseEntries(entries.map(formatEntry).join("")), expected)
    },
    MANY
  )

  it.prop(
    "never throws on arbitrary text or on a journal cut and spliced anywhere",
    {
      text: fc.oneof(
        anyText(2000),
        fc.tuple(fc.array(journalEntry, { minLength: 1, maxLength: 3 }), fc.nat(), fc.nat(), anyText(40)).map(([entries, a, b, noise]) => {
          const text = entries.map(formatEntry).join("")
          return text.slice(0, a % text.length) + noise + text.slice(b % text.length)
        })
      )
    },
    ({ text }) => {
      for (const entry of parseEntries(text)) {
        assert.isTrue(Number.isInteger(entry.iteration))
        assert.isString(entry.stdout)
        assert.isString(entry.stderr)
      }
    },
    MANY
  )
})
