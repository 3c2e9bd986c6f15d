import { describe, expect, it } from "@effect/vitest"
import {
  ENTRY_DELIMITER,
  formatEntry,
  parseEntries,
  previousErrorsSection,
  trimEntryForPrompt
} from "../src/state/JournalEntry.js"
import { makeByteHeadTail } from "../src/output/HeadTail.js"
import { sampleEntry } from "./journalFixture.js"

const utf8 = (text: string) => new TextEncoder().encode(text)

const entry = sampleEntry

describe("error journal entries", () => {
  it("writes a delimiter, a header with every field, then labelled stderr and stdout blocks", () => {
    const text = formatEntry(entry())
    const lines = text.split("\n")
    expect(lines[0]).toBe(ENTRY_DELIMITER)
    for (const field of ["- time: 2026-11-22T02:30:00.000Z", "- run: 20261122T023000Z-abcd", "- iteration: 2", "- exit: code 1", "- task: 1.2", "- description: Add the entry point"]) {
      expect(lines).toContain(field)
    }
    expect(text.indexOf("### stderr")).toBeLessThan(text.indexOf("### stdout"))
    expect(text).toContain("```text\nTypeError: boom\n```")
  })

  it("omits an empty stream's block", () => {
    const text = formatEntry(entry({ stdout: "" }))
    expect(text).toContain("### stderr")
    expect(text).not.toContain("### stdout")
  })

  it("records a signal or a timeout instead of an exit code", () => {
    expect(formatEntry(entry({ exitCode: null, signal: "SIGKILL" }))).toContain("- exit: signal SIGKILL")
    expect(formatEntry(entry({ exitCode: null, timedOut: true }))).toContain("- exit: timed out")
  })

  it("reads entries back exactly, even when the output holds fences and delimiter lines", () => {
    const tricky = entry({ stdout: `\`\`\`\n${ENTRY_DELIMITER}\n- run: fake\n### stderr\n\`\`\`\`\` five\n`, stderr: "" })
    // A delimiter line ending a block, another block after it: the entry goes on past the block's fence.
    const delimiterLast = entry({ stderr: `failed\n${ENTRY_DELIMITER}\n`, stdout: "the output after it\n" })
    const entries = [entry(), tricky, delimiterLast, entry({ iteration: 3, exitCode: null, signal: "SIGTERM", taskId: null, taskDescription: null })]
    const parsed = parseEntries(entries.map(formatEntry).join(""))
    expect(parsed).toEqual(entries)
  })

  it("skips text that is not a well-formed entry", () => {
    expect(parseEntries(`junk\n${ENTRY_DELIMITER}\n- nothing useful\n${formatEntry(entry())}`)).toEqual([entry()])
  })

  it("keeps the head and the tail of a huge stream, with a marker saying how much was cut and where the full log is", () => {
    const capture = makeByteHeadTail(1000)
    capture.append(utf8("HEAD"))
    for (let i = 0; i < 5000; i++) capture.append(utf8("x".repeat(100)))
    capture.append(utf8("TAIL"))
    const text = capture.text("logs/run-002.log")
    expect(text.startsWith("HEAD")).toBe(true)
    expect(text.endsWith("TAIL")).toBe(true)
    expect(text).toContain(`[... ${4 + 500_000 + 4 - 2000} bytes cut here; the full output is in logs/run-002.log ...]`)
    expect(text.length).toBeLessThan(2200)
  })

  it("keeps a stream that fits whole, with no marker", () => {
    const capture = makeByteHeadTail(1000)
    capture.append(utf8("a".repeat(700)))
    capture.append(utf8("b".repeat(1300)))
    expect(capture.text("x")).toBe("a".repeat(700) + "b".repeat(1300))
  })

  it("trims an entry to a budget for the prompt, keeping the end of each stream", () => {
    const trimmed = trimEntryForPrompt(entry({ stderr: `${"e".repeat(5000)}LAST-ERR`, stdout: `${"o".repeat(5000)}LAST-OUT` }), 1000)
    expect(trimmed.stderr.length + trimmed.stdout.length).toBeLessThan(1200)
    expect(trimmed.stderr.endsWith("LAST-ERR")).toBe(true)
    expect(trimmed.stdout.endsWith("LAST-OUT")).toBe(true)
  })

  it("frames previous errors so the agent fixes or avoids their cause", () => {
    const body = previousErrorsSection([entry(), entry({ iteration: 3 })])!
    expect(body).toMatch(/fix it or avoid it, and do not repeat it/)
    expect(body).toContain("### Run 20261122T023000Z-abcd, iteration 2: code 1, task 1.2: Add the entry point")
    expect(body).toContain("TypeError: boom")
    expect(previousErrorsSection([])).toBeNull()
  })

  it("keeps a rejected claim's check, with its output, through the journal and into the prompt", () => {
    const check = { command: "pnpm test -- --reporter dot: unit", result: "exit 1, 4.2s", output: "FAIL greet.test.js\n1 failing\n" }
    const original = entry({ exitCode: 0, stderr: "", stdout: "", check })
    const text = formatEntry(original)
    expect(text).toContain("## Iteration 2 failed (verify failed: pnpm test -- --reporter dot: unit, exit 1, 4.2s)")
    expect(text).toContain("- check: exit 1, 4.2s: pnpm test -- --reporter dot: unit")
    expect(parseEntries(text)).toEqual([original])
    const body = previousErrorsSection([original])!
    expect(body).toContain("### Run 20261122T023000Z-abcd, iteration 2: verify failed: pnpm test -- --reporter dot: unit, exit 1, 4.2s, task 1.2")
    expect(body).toContain("`pnpm test -- --reporter dot: unit` did not pass (exit 1, 4.2s)")
    expect(body).toContain("```\nFAIL greet.test.js\n1 failing\n```")
    // Entries without a check read back without one.
    expect(parseEntries(formatEntry(entry()))[0]).not.toHaveProperty("check")
  })

  it("cuts a check's output without saying where the rest is, when it is nowhere", () => {
    const capture = makeByteHeadTail(10)
    capture.append(utf8("a".repeat(30)))
    expect(capture.text(null)).toBe(`${"a".repeat(10)}\n[... 10 bytes cut here ...]\n${"a".repeat(10)}`)
  })

  it("writes an entry exactly: header, fields, then the blocks, each separated by a blank line", () => {
    expect(formatEntry(entry({ error: "  API error:\n  rate   limited  ", stdout: "" }))).toBe(
      [
        ENTRY_DELIMITER,
        "## Iteration 2 failed (code 1)",
        "",
        "- time: 2026-11-22T02:30:00.000Z",
        "- run: 20261122T023000Z-abcd",
        "- iteration: 2",
        "- exit: code 1",
        "- error: API error: rate limited",
        "- task: 1.2",
        "- description: Add the entry point",
        "",
        "### stderr",
        "",
        "```text",
        "TypeError: boom",
        "```",
        "",
        ""
      ].join("\n")
    )
    const check = { command: "  pnpm\n test ", result: "exit 1, 4.2s", output: "" }
    const rejected = entry({ exitCode: 0, stderr: "", stdout: "out", taskId: null, taskDescription: null, check })
    expect(parseEntries(formatEntry(rejected))).toEqual([{ ...rejected, stdout: "out\n", check: { ...check, command: "pnpm test" } }])
    expect(formatEntry(rejected)).toBe(
      [
        ENTRY_DELIMITER,
        "## Iteration 2 failed (verify failed: pnpm test, exit 1, 4.2s)",
        "",
        "- time: 2026-11-22T02:30:00.000Z",
        "- run: 20261122T023000Z-abcd",
        "- iteration: 2",
        "- exit: code 0",
        "- check: exit 1, 4.2s: pnpm test",
        "- task: none",
        "- description: none",
        "",
        "### stdout",
        "",
        "```text",
        "out",
        "```",
        "",
        ""
      ].join("\n")
    )
  })

  it("reads only an entry's own whole lines: text edited around the fields and blocks changes nothing", () => {
    const original = entry({ stderr: "", stdout: "" })
    const fields = formatEntry(original).trimEnd()
    const edited = [
      // Fields before any delimiter belong to no entry.
      "junk",
      "- time: 2026-01-01T00:00:00.000Z",
      "- run: stray",
      "- iteration: 9",
      "- exit: code 9",
      fields,
      "note - run: not a field",
      "- task: 9.9\u2028more",
      "see ### stderr",
      "```text",
      "not a block",
      "```",
      "### stderr (cut)",
      "```text",
      "not a block either",
      "```",
      "### stdout",
      "",
      "no fence",
      "### stdout",
      "",
      "```text",
      "out",
      "```",
      "- run: after a block",
      "### stderr",
      "",
      "```textual",
      "- run: inside a bad fence",
      "```",
      "### stderr",
      "",
      "x```text",
      "err",
      "```",
      ""
    ].join("\n")
    expect(parseEntries(edited)).toEqual([{ ...original, stdout: "out\n" }])
  })

  it("reads an entry cut off inside its last block, as a write stopped part of the way leaves it, to the end of the text", () => {
    const text = formatEntry(entry())
    const cutOff = text.slice(0, text.lastIndexOf("```"))
    expect(cutOff.endsWith("running tests\n1 failed\n")).toBe(true)
    // The lines up to the end are the block's; the last of them is the empty one after the final newline.
    expect(parseEntries(cutOff)).toEqual([{ ...entry(), stdout: "running tests\n1 failed\n\n" }])
  })

  it("skips an entry missing its time, its run or its iteration", () => {
    const text = formatEntry(entry())
    for (const line of ["- time: 2026-11-22T02:30:00.000Z\n", "- run: 20261122T023000Z-abcd\n", "- iteration: 2\n"]) {
      expect(parseEntries(text.replace(line, ""))).toEqual([])
    }
    expect(parseEntries(text.replace("- iteration: 2\n", "- iteration: 2.5\n"))).toEqual([])
  })

  it("reads an exit it does not recognise as no exit code, signal or timeout", () => {
    const text = formatEntry(entry())
    for (const exit of ["exit code 1", "code 1 (edited)", "code one", "killed by signal SIGTERM", "signal SIGTERM now", "timed out twice", ""]) {
      expect(parseEntries(text.replace("- exit: code 1", `- exit: ${exit}`))).toEqual([{ ...entry(), exitCode: null }])
    }
    expect(parseEntries(text.replace("- exit: code 1", "- exit: code -12"))).toEqual([{ ...entry(), exitCode: -12 }])
  })

  it("keeps a stream that fits the budget whole, and says exactly how much of a longer one was cut", () => {
    const fits = entry({ stderr: "e".repeat(600), stdout: "o".repeat(400) })
    expect(trimEntryForPrompt(fits, 1000)).toEqual(fits)
    const trimmed = trimEntryForPrompt(entry({ stderr: "", stdout: `${"o".repeat(1500)}END` }), 1000)
    expect(trimmed.stderr).toBe("")
    expect(trimmed.stdout).toBe(`[... 503 characters cut ...]\n${"o".repeat(997)}END`)
  })

  it("writes the previous errors exactly: one section per entry, its error, check and streams in fences", () => {
    const withError = entry({ error: "rate limited", taskDescription: null, stderr: "  boom\n\n", stdout: "" })
    const rejected = entry({
      iteration: 3,
      exitCode: 0,
      taskId: null,
      stderr: "",
      stdout: "\n  done\n",
      check: { command: "pnpm test", result: "exit 1, 4.2s", output: "\n" }
    })
    expect(previousErrorsSection([withError, rejected])).toBe(
      [
        "Earlier iterations failed as recorded below (newest last). Find the cause of each, fix it or avoid it, and do not repeat it.",
        "",
        "### Run 20261122T023000Z-abcd, iteration 2: code 1, task 1.2",
        "error: rate limited",
        "stderr:",
        "```",
        "  boom",
        "```",
        "",
        "### Run 20261122T023000Z-abcd, iteration 3: verify failed: pnpm test, exit 1, 4.2s",
        "The claim of completion was rejected: `pnpm test` did not pass (exit 1, 4.2s).",
        "It printed nothing.",
        "stdout:",
        "```",
        "",
        "  done",
        "```"
      ].join("\n")
    )
  })
})
