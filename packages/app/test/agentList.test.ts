import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { agentId, agentList, fallbackChoice } from "../src/agents/AgentList.js"
import type { AgentChoice } from "../src/agents/Harnesses.js"
import * as Invocation from "../src/host/Invocation.js"

const claude: AgentChoice = { harness: "claude", model: null, allowAll: true, harnessCommand: null }
const invocation = Invocation.make("/tmp", { env: { PATH: "/usr/bin" } })

/** The agents of a loop, or the one line its mistake gets, with the option it names. */
const listOf = (fallback: ReadonlyArray<string>, rotate = false, agent: AgentChoice = claude) =>
  Effect.runSync(
    Effect.match(agentList({ agent, fallback, rotate }, invocation, false), {
      onFailure: (error) => ({ error: error.message, option: error.option }),
      onSuccess: (agents) => ({ ids: agents.map((a) => [a.id, a.harness, a.model]) })
    })
  )

describe("the agents of a loop", () => {
  it("are named by harness and model, a command by its command line", () => {
    expect(agentId(claude)).toBe("claude")
    expect(agentId({ ...claude, model: " opus " })).toBe("claude:opus")
    expect(agentId({ harness: "command", model: "x", allowAll: false, harnessCommand: " ./agent.sh --fast " })).toBe("command:./agent.sh --fast")
  })

  it("take the loop's agent first, then the fallbacks in order, each with the loop's other settings", () => {
    expect(listOf(["codex:gpt-5.5", " opencode:anthropic/claude-sonnet-4-5 ", "command:./agent.sh --model x:y"])).toEqual({
      ids: [
        ["claude", "claude", null],
        ["codex:gpt-5.5", "codex", "gpt-5.5"],
        ["opencode:anthropic/claude-sonnet-4-5", "opencode", "anthropic/claude-sonnet-4-5"],
        ["command:./agent.sh --model x:y", "command", null]
      ]
    })
    expect(Effect.runSync(fallbackChoice("pi", claude))).toEqual({ harness: "pi", model: null, allowAll: true, harnessCommand: null })
    expect(Effect.runSync(fallbackChoice("command: ./a.sh", claude))).toEqual({ harness: "command", model: null, allowAll: true, harnessCommand: "./a.sh" })
  })

  it("refuse each mistake with one line naming the option", () => {
    expect(listOf(["codx:gpt-5.5"])).toEqual({
      error: "--fallback 'codx:gpt-5.5': unknown harness 'codx'; known harnesses: opencode, claude, codex, gemini, pi, copilot, qwen, command",
      option: "fallback"
    })
    expect(listOf(["codex:"])).toMatchObject({ error: expect.stringContaining("nothing after the colon"), option: "fallback" })
    expect(listOf(["command"])).toMatchObject({ error: expect.stringContaining("command needs its command line"), option: "fallback" })
    expect(listOf(["claude"])).toEqual({
      error: "--fallback names claude twice (the loop's --harness/--model is the first agent); give each agent once",
      option: "fallback"
    })
    expect(listOf(["codex", "codex"])).toMatchObject({ error: expect.stringContaining("names codex twice"), option: "fallback" })
    // Another model of the same harness is another agent.
    expect(listOf(["claude:sonnet"])).toMatchObject({ ids: [["claude", "claude", null], ["claude:sonnet", "claude", "sonnet"]] })
    // The loop's own command is named `command` where it shows; its line is checked against the fallbacks' all the same.
    const own: AgentChoice = { harness: "command", model: null, allowAll: false, harnessCommand: "./agent.sh --key x" }
    expect(listOf(["command:./other.sh"], false, own)).toEqual({ ids: [["command", "command", null], ["command:./other.sh", "command", null]] })
    expect(listOf(["command:./agent.sh --key x"], false, own)).toMatchObject({ error: expect.stringContaining("names command:./agent.sh --key x twice") })
    expect(listOf([], true)).toEqual({
      error: "--rotate takes the loop's agent and its fallbacks in turn; name one with --fallback <harness>[:<model>]",
      option: "rotate"
    })
    expect(listOf(["codex"], true)).toMatchObject({ ids: [["claude", "claude", null], ["codex", "codex", null]] })
  })
})
