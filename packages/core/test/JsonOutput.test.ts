import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { makeJsonOutput, makeLineDecoder } from "../src/index.js"
import { HarnessEvent, type HarnessEvent as Event, outputOf } from "../src/HarnessService.js"

const Said = Schema.Struct({ type: Schema.Literal("said"), text: Schema.String })
const decodeLine = makeLineDecoder(Said)
const stdout = (text: string) => outputOf("stdout", text)
const stderr = (text: string) => outputOf("stderr", text)
const exited = HarnessEvent.Exited({ exitCode: 0, signal: null })

const reader = (seen: Array<string>) =>
  makeJsonOutput<typeof Said.Type>({
    agent: "echo",
    decodeLine,
    agentTextHead: /"said"/,
    isAgentText: () => true,
    onEvent: (out, event) => void out.push(HarnessEvent.AgentText({ text: event.text })),
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
})
