import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { HarnessEvent } from "../src/harness/HarnessService.js"
import { makeJsonOutput, makeLineDecoder, viewOfLog } from "../src/index.js"

const Said = Schema.Struct({ type: Schema.Literal("said"), text: Schema.String })
const Ran = Schema.Struct({ type: Schema.Literal("ran"), command: Schema.String })
const SaidOrRan = Schema.Union(Said, Ran)

/** A JSON agent's reader, as a harness package makes one: its text shown and judged, its commands shown. */
const jsonReader = () =>
  makeJsonOutput<typeof SaidOrRan.Type>({
    agent: "echo",
    decodeLine: makeLineDecoder(SaidOrRan),
    agentTextHead: /"said"/,
    isAgentText: (event) => event.type === "said",
    onEvent: (out, event) =>
      void (event.type === "said"
        ? out.push(HarnessEvent.Display({ text: `${event.text}\n` }), HarnessEvent.AgentText({ text: event.text }))
        : out.push(HarnessEvent.Display({ text: `$ ${event.command}\n` }))),
    onExit: (out) => void out.push(HarnessEvent.Display({ text: "the run ended\n" }))
  })

describe("viewOfLog: an iteration log's output as its harness showed it", () => {
  it("reads a JSON agent's events as the lines it showed, stderr as it showed stderr, and leaves out the line still being written", () => {
    const log = [
      "{\"type\":\"said\",\"text\":\"Reading the tasks.\"}",
      "{\"type\":\"ran\",\"command\":\"pnpm test\"}",
      "{\"type\":\"unknown\"}",
      "a plain line",
      "[stderr] warning: slow",
      "[stderr]  ",
      "{\"type\":\"said\",\"text\":\"<promise>COMPLETE</promise>\"}",
      "{\"type\":\"said\",\"text\":\"half"
    ].join("\n")
    expect(viewOfLog(jsonReader(), log)).toBe(
      "Reading the tasks.\n$ pnpm test\na plain line\nwarning: slow\n<promise>COMPLETE</promise>\n"
    )
  })

  it("shows a reader's plain output as it came, and nothing of an empty log or one with only a line in progress", () => {
    const plain = { feed: (event: HarnessEvent) => event._tag === "Output" ? [HarnessEvent.Output({ ...event, plain: true })] : [event] }
    expect(viewOfLog(plain, "one\n[stderr] two\nthree")).toBe("one\ntwo\n")
    expect(viewOfLog(jsonReader(), "")).toBe("")
    expect(viewOfLog(jsonReader(), "{\"type\":\"said\",\"text\":\"not yet")).toBe("")
  })
})
