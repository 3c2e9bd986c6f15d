import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { firstLine, type HarnessEvents, makeJsonOutput, makeLineDecoder, showLine, stripAnsi } from "../src/index.js"
import { HarnessEvent, type HarnessEvent as Event, outputOf } from "../src/harness/HarnessService.js"
import { inBatches } from "./fixtures/harnessEvents.js"

const Said = Schema.Struct({ type: Schema.Literal("said"), text: Schema.String })
const Ran = Schema.Struct({ type: Schema.Literal("ran"), output: Schema.String })
const SaidOrRan = Schema.Union(Said, Ran)
const decodeLine = makeLineDecoder(SaidOrRan)
const stdout = (text: string) => outputOf("stdout", text)
const stderr = (text: string) => outputOf("stderr", text)
const exited = HarnessEvent.Exited({ exitCode: 0, signal: null })

const reader = (seen: Array<string>) =>
  makeJsonOutput<typeof SaidOrRan.Type>({
    agent: "echo",
    decodeLine,
    agentTextHead: /"said"/,
    isAgentText: (event) => event.type === "said",
    onEvent: (out, event) =>
      void out.push(
        event.type === "said" ? HarnessEvent.AgentText({ text: event.text }) : HarnessEvent.Display({ text: `ran: ${event.output.length} chars` })
      ),
    onExit: (out) => void out.push(HarnessEvent.Failed({ message: `ended after ${seen.join(",")}` })),
    maxLineLength: 200_000
  })

const meaning = (events: ReadonlyArray<Event>) =>
  events.filter((event) => event._tag !== "Output").map((event) => {
    switch (event._tag) {
      case "AgentText":
        return `text:${event.text.length > 40 ? `${event.text.length} chars` : event.text}`
      case "Display":
        return `show:${event.text}`
      case "Failed":
        return `failed:${event.message}`
      default:
        return event._tag
    }
  })

describe("makeJsonOutput", () => {
  it("passes each chunk on, then what its lines mean, a line split across chunks read once whole", () => {
    const output = reader(["all"])
    const first = output.feed(stdout("{\"type\":\"said\",\"te"))
    expect(first.map((event) => event._tag)).toEqual(["Output"])
    const second = output.feed(stdout("xt\":\"hi\"}\nnot json\n{\"type\":\"other\"}\n"))
    expect(second[0]!._tag).toBe("Output")
    expect(meaning(second)).toEqual(["text:hi", "show:not json\n"])
  })

  it("shows stderr lines unless blank, and at exit reads the unterminated last lines before onExit and Exited", () => {
    const output = reader(["lines"])
    expect(meaning(output.feed(stderr("warning: slow\n  \n")))).toEqual(["show:warning: slow\n"])
    const end = [...output.feed(stdout("{\"type\":\"said\",\"text\":\"bye\"}")), ...output.feed(exited)]
    expect(meaning(end)).toEqual(["text:bye", "failed:ended after lines", "Exited"])
  })

  it("reads a long line holding the agent's text whole, and names a line past the limit without keeping it", () => {
    const output = reader([])
    const long = "x".repeat(100_000)
    expect(meaning(output.feed(stdout(`${JSON.stringify({ type: "said", text: long })}\n`)))).toEqual(["text:100000 chars"])
    const tooLong = `${JSON.stringify({ type: "said", text: "y".repeat(300_000) })}\n`
    expect(meaning(output.feed(stdout(tooLong)))).toEqual([`show:(echo printed a ${tooLong.length - 1}-byte line on stdout; it is only in the log)\n`])
  })

  it("reads a long line holding the agent's text whole when it comes in pieces, even after leading blanks", () => {
    const long = "x".repeat(100_000)
    const output = reader([])
    expect(meaning(inBatches(`${JSON.stringify({ type: "said", text: long })}\n`, 30_000).flatMap(output.feed))).toEqual(["text:100000 chars"])
    expect(meaning(inBatches(`  ${JSON.stringify({ type: "said", text: long })}\n`, 30_000).flatMap(output.feed))).toEqual(["text:100000 chars"])
  })

  it("cuts the long strings of any other long JSON line to their first KiB, whether it comes at once or in pieces", () => {
    const line = `${JSON.stringify({ type: "ran", output: "y".repeat(100_000) })}\n`
    expect(meaning(reader([]).feed(stdout(line)))).toEqual(["show:ran: 1024 chars"])
    expect(meaning(inBatches(line, 30_000).flatMap(reader([]).feed))).toEqual(["show:ran: 1024 chars"])
  })

  it("reads a JSON line past the length limit from its cut strings when it comes in pieces, even after leading blanks", () => {
    const line = `${JSON.stringify({ type: "ran", output: "y".repeat(300_000) })}\n`
    expect(meaning(inBatches(line, 30_000).flatMap(reader([]).feed))).toEqual(["show:ran: 1024 chars"])
    expect(meaning(inBatches(`\t ${line}`, 30_000).flatMap(reader([]).feed))).toEqual(["show:ran: 1024 chars"])
  })

  it("shows a long line that is not JSON whole, quoted parts and all, whether it comes at once or in pieces", () => {
    const line = `warning: "${"z".repeat(100_000)}"`
    const shown = (events: ReadonlyArray<Event>) => events.flatMap((event) => event._tag === "Display" ? [event.text] : [])
    expect(shown(reader([]).feed(stdout(`${line}\n`)))).toEqual([`${line}\n`])
    expect(shown(inBatches(`${line}\n`, 30_000).flatMap(reader([]).feed))).toEqual([`${line}\n`])
  })

  it("skips blank stdout lines, and passes on any event other than output unchanged", () => {
    const output = reader([])
    expect(meaning(output.feed(stdout("  \n\t\nhello\n")))).toEqual(["show:hello\n"])
    const warning = HarnessEvent.Warning({ message: "slow" })
    expect(output.feed(warning)).toEqual([warning])
  })
})

describe("firstLine", () => {
  it("gives the first line, trimmed, cut with an ellipsis past the limit (160 by default)", () => {
    expect(firstLine("\n  npm test\necho more\n")).toBe("npm test")
    expect(firstLine("npm test \r\necho more\r\n")).toBe("npm test")
    expect(firstLine("abcdef", 6)).toBe("abcdef")
    expect(firstLine("abcdefg", 6)).toBe("abcde…")
    expect(firstLine("x".repeat(160))).toBe("x".repeat(160))
    expect(firstLine("x".repeat(161))).toBe(`${"x".repeat(159)}…`)
    expect(firstLine("")).toBe("")
  })
})

describe("stripAnsi", () => {
  it("drops colour and cursor codes, keeping the text around them", () => {
    expect(stripAnsi("\x1b[1;31merror\x1b[0m: \x1b[2mdisk full\x1b[m\x1b[?25l")).toBe("error: disk full")
    expect(stripAnsi("no codes [1m here")).toBe("no codes [1m here")
  })
})

describe("showLine", () => {
  it("shows text as a line of its own, adding a line break only when it has none", () => {
    const out: HarnessEvents = []
    showLine(out, "done")
    showLine(out, "ready\n")
    expect(out).toEqual([HarnessEvent.Display({ text: "done\n" }), HarnessEvent.Display({ text: "ready\n" })])
  })
})
