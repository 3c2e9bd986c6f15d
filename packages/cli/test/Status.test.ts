import { type AgentNote, ChangeId, type HarnessUsage, type LoopState, loopSummary, listChange, parseTasks, type ReviewRecord, type StatusReport } from "@spool/core"
import { iterationRecord } from "@spool/testkit/iterationRecord"
import { describe, expect, it } from "vitest"
import { palette } from "../src/Colour.js"
import { listText } from "../src/ralph/ListText.js"
import { statusListText, statusText } from "../src/Status.js"

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

  it("of a run with reviews: how many and how many approved, the reviewers' spend apart, and each claim's reviews under its iteration", () => {
    const used = (inputTokens: number, cost: number | null): HarnessUsage =>
      ({ inputTokens, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost })
    const review = (reviewer: string, verdict: ReviewRecord["verdict"], findings: string | null, usage: HarnessUsage | null): ReviewRecord =>
      ({ reviewer, verdict, findings, durationMs: 1000, usage })
    const reviewed: StatusReport = {
      ...report({ status: "complete" }),
      history: [
        iterationRecord({ iteration: 1, startedAt: "2026-11-27T10:00:00.000Z", usage: used(50_000, 0.9) }),
        iterationRecord({
          iteration: 2,
          startedAt: "2026-11-27T10:01:00.000Z",
          outcome: "changes",
          promises: [{ accepted: false, reason: "review by claude: changes asked: the parser has no test", text: "<promise>COMPLETE</promise>" }],
          reviews: [review("claude", "changes", "the parser has no test\nand the README says nothing", used(7000, 0.21))]
        }),
        iterationRecord({
          iteration: 3,
          startedAt: "2026-11-27T10:02:00.000Z",
          outcome: "complete",
          completionDetected: true,
          reviews: [review("claude", "approve", null, used(5000, 0.1)), review("codex:gpt-5.5", "approve", null, null)]
        })
      ]
    }
    const text = statusText(reviewed)
    expect(text).toContain("usage:     50000 tokens, $0.90 over the iterations below\nreviews:   3 (2 approved), $0.31, 12.0k tokens\n")
    expect(text.split("\n").slice(-8).join("\n")).toBe([
      "  iter started               duration  exit     promise  changed  commit   outcome",
      "  run r1 (the latest)",
      "  1    2026-11-27T10:00:00Z  10ms      0        -        n/a      -        continue",
      "  2    2026-11-27T10:01:00Z  10ms      0        declined n/a      -        changes",
      "       review by claude: changes asked: the parser has no test and the README says nothing",
      "  3    2026-11-27T10:02:00Z  10ms      0        found    n/a      -        complete",
      "       review by claude: approved",
      "       review by codex:gpt-5.5: approved"
    ].join("\n"))
    // Reviews that reported no usage: their cost is unknown, and no tokens are named.
    const unreported = { ...reviewed, history: [iterationRecord({ outcome: "changes", reviews: [review("command:./review.sh", "none", "no verdict", null)] })] }
    expect(statusText(unreported)).toMatch(/^reviews: {3}1 \(0 approved\), cost unknown$/m)
    expect(statusText(report({}))).not.toMatch(/^reviews:/m)
  })

  it("ending review-rejected: says so, in the colour of an ending to act on rather than a failure, here and in the list", () => {
    const stopMessage = "stopped: the review turned the claim down 3 times (--max-reviews 3); the last: review by claude: changes asked: add a test; a person should look (spool ralph --status)"
    const rejected = report({ status: "review-rejected", stopReason: "review-rejected", stopMessage })
    const text = statusText(rejected)
    expect(text).toMatch(/^status: {4}review-rejected$/m)
    expect(text).toContain(`ended:     review-rejected (${stopMessage})`)
    const colours = palette(true)
    expect(statusText(rejected, colours)).toContain(`status:    ${colours.yellow("review-rejected")}`)
    const row = loopSummary(rejected)
    const list = statusListText([row, { ...row, changeId: ChangeId.make("002-02_other"), shownStatus: "complete" as const, lastOutcome: "complete" as const }], colours)
    expect(list.split("\n")[1]).toContain(colours.yellow("review-rejected"))
    expect(statusListText([row]).split("\n")[1]).toBe("002-01_add-ralph-loop  review-rejected  3 of 20    -      continue")
  })
})

describe("--list", () => {
  it("lists a change its reviewers turned down as ready again, its last run review-rejected; --json says so in its keys", () => {
    const listed = listChange({
      candidate: { id: "002-01_add-ralph-loop", archived: false, hasProposal: true, loopStatus: "review-rejected", tasks: { complete: 4, shelved: 0, total: 4 }, merge: null },
      lastRun: { status: "review-rejected", iteration: 6, maxIterations: 20, resumeAt: null },
      holder: null
    })
    expect(listText([listed], palette(false))).toBe("002-01_add-ralph-loop  ready      last run: review-rejected at iteration 6/20; tasks 4/4")
    expect(JSON.parse(JSON.stringify([listed]))[0]).toMatchObject({ ready: true, state: "ready", lastStatus: "review-rejected", iteration: 6, maxIterations: 20 })
  })
})
