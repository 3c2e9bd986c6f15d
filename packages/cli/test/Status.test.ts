import { type AgentNote, ChangeId, type LoopState, parseTasks, type StatusReport } from "@spool/core"
import { iterationRecord } from "@spool/testkit/iterationRecord"
import { describe, expect, it } from "vitest"
import { statusText } from "../src/Status.js"

const changeId = ChangeId.make("002-01_add-ralph-loop")

const state: LoopState = {
  changeId,
  run: "r1",
  status: "running",
  iteration: 3,
  minIterations: 1,
  maxIterations: 20,
  startedAt: "2026-11-27T10:00:00.000Z",
  updatedAt: "2026-11-27T10:05:00.000Z",
  pid: 1,
  harness: "claude",
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  guards: null
}

const note = (agent: string, harness: string, fields: Partial<AgentNote> = {}): AgentNote =>
  ({ agent, harness, model: null, iterations: 0, costUsd: null, tokens: 0, limitedUntil: null, ...fields })

const report = (patch: Partial<LoopState>): StatusReport => ({
  changeId,
  state: { ...state, ...patch },
  history: [
    iterationRecord({ iteration: 1, startedAt: "2026-11-27T10:00:00.000Z", outcome: "limited", agent: "claude", harness: "claude", model: null }),
    iterationRecord({ iteration: 2, startedAt: "2026-11-27T10:01:00.000Z", agent: "codex:gpt-5.5", harness: "codex", model: "gpt-5.5" }),
    iterationRecord({ iteration: 3, startedAt: "2026-11-27T10:02:00.000Z" })
  ],
  tasks: parseTasks(null),
  skipped: 0
})

describe("--status of one change", () => {
  it("of a run with several agents: the agent of its last iteration, what each ran and spent, and the agent of each iteration", () => {
    const text = statusText(report({
      agent: "codex:gpt-5.5",
      agents: [
        note("claude", "claude", { iterations: 1, costUsd: 1.2, tokens: 9000, limitedUntil: "2026-11-27T15:00:00.000Z" }),
        note("codex:gpt-5.5", "codex", { iterations: 1, tokens: 15200 }),
        note("gemini", "gemini")
      ]
    }))
    expect(text).toContain([
      "agent:     codex:gpt-5.5",
      "agents:    claude 1 iteration $1.20, limited until 2026-11-27T15:00:00.000Z",
      "           codex:gpt-5.5 1 iteration (15.2k tokens, cost unknown)",
      "           gemini 0 iterations"
    ].join("\n"))
    expect(text.split("\n").slice(-5).join("\n")).toBe([
      "  iter started               duration  exit     promise  changed  commit   outcome      agent",
      "  run r1 (the latest)",
      "  1    2026-11-27T10:00:00Z  10ms      0        -        n/a      -        limited      claude",
      "  2    2026-11-27T10:01:00Z  10ms      0        -        n/a      -        continue     codex:gpt-5.5",
      "  3    2026-11-27T10:02:00Z  10ms      0        -        n/a      -        continue     -"
    ].join("\n"))
  })

  it("of a run of one agent (or written before agents were kept) reads as ever: no agent, no column", () => {
    for (const patch of [{ agents: [note("claude", "claude", { iterations: 3 })] }, {}]) {
      const text = statusText(report(patch))
      expect(text).not.toMatch(/^agents?:/m)
      expect(text.split("\n").slice(-5)[0]).toMatch(/ commit {3}outcome$/)
      expect(text.split("\n").at(-1)).toMatch(/ continue$/)
    }
  })
})
