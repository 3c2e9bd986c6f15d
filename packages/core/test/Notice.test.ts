import { assert, describe, it } from "@effect/vitest"
import { ChangeId, type IterationRecord, type LoopState, LoopStatus } from "../src/domain/Domain.js"
import { LoopEvent } from "../src/live/LoopEvents.js"
import {
  DEFAULT_NOTICE_EVENTS,
  type Followed,
  isNoticeEvent,
  NOTICE_EVENTS,
  type NoticeDraft,
  noticeLine,
  noticesOf,
  unfollowed
} from "../src/notify/Notice.js"
import { iterationRecord } from "./fixtures/iterationRecord.js"

const changeId = ChangeId.make("002-01_add-ralph-loop")

const guards = {
  maxCostUsd: 5,
  maxTokens: null,
  maxDurationMs: null,
  stallIterations: 5,
  maxConsecutiveFailures: 5,
  maxLimitWaitMs: 3_600_000,
  costUsd: 0.42,
  tokens: 15200,
  stalledIterations: 0,
  consecutiveFailures: 0
}

const running: LoopState = {
  changeId,
  branch: "spool/002-01_add-ralph-loop",
  run: "r1",
  status: "running",
  iteration: 3,
  minIterations: 1,
  maxIterations: 20,
  startedAt: "2026-11-27T10:00:00.000Z",
  updatedAt: "2026-11-27T10:05:00.000Z",
  pid: 1,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  guards
}

/** Follows `states` in order from nothing, and gives every notice they made. */
const follow = (events: ReadonlyArray<LoopEvent>, from: Followed = unfollowed) => {
  let followed = from
  const notices: Array<NoticeDraft> = []
  for (const event of events) {
    const next = noticesOf(followed, event)
    followed = next.followed
    notices.push(...next.notices)
  }
  return { followed, notices }
}

const stateChanged = (patch: Partial<LoopState>) => LoopEvent.StateChanged({ changeId, state: { ...running, ...patch } })
const recorded = (patch: Partial<IterationRecord>) =>
  LoopEvent.IterationRecorded({ changeId, record: iterationRecord({ iteration: 3, startedAt: "2026-11-27T10:04:00.000Z", durationMs: 60_000, ...patch }) })

describe("what a loop's events tell", () => {
  it("a run that starts and runs tells nothing", () => {
    assert.deepStrictEqual(follow([stateChanged({ iteration: 0 }), stateChanged({ iteration: 1 }), recorded({ iteration: 1 })]).notices, [])
  })

  it("each way a run ends is its own event, with why it ended as its outcome and the state's words as its message", () => {
    const ends: ReadonlyArray<[LoopState["status"], LoopState["stopReason"], string]> = [
      ["complete", "complete", "complete"],
      ["max-iterations", "max-iterations", "max-iterations"],
      ["failed", "failures", "failed"],
      ["stopped", "max-cost", "stopped"],
      ["stopped", "stall", "stopped"],
      ["deadline", "deadline", "deadline"],
      ["interrupted", "interrupted", "interrupted"],
      ["review-rejected", "review-rejected", "review-rejected"]
    ]
    for (const [status, stopReason, event] of ends) {
      const { notices } = follow([stateChanged({}), stateChanged({ status, stopReason, stopMessage: `ended: ${stopReason}` })])
      assert.deepStrictEqual(notices, [{
        event: event as NoticeDraft["event"],
        change: changeId,
        run: "r1",
        iteration: 3,
        maxIterations: 20,
        outcome: stopReason!,
        message: `ended: ${stopReason}`,
        costUsd: 0.42,
        tokens: 15200,
        branch: "spool/002-01_add-ralph-loop",
        commit: null,
        resumeAt: null
      }], status)
    }
  })

  it("every status a run ends with is told, by default", () => {
    const endings = LoopStatus.literals.filter((status) => status !== "running" && status !== "waiting")
    for (const status of endings) {
      const { notices } = follow([stateChanged({}), stateChanged({ status, stopReason: null, stopMessage: null })])
      assert.lengthOf(notices, 1, status)
      assert.include(DEFAULT_NOTICE_EVENTS, notices[0]!.event, status)
    }
    const message = "stopped: the review turned the claim down 3 times (--max-reviews 3); the last: review by claude: changes asked: add a test; a person should look (spool ralph --status)"
    const [rejected] = follow([stateChanged({}), stateChanged({ status: "review-rejected", stopReason: "review-rejected", stopMessage: message })]).notices
    assert.strictEqual(
      noticeLine({ ...rejected!, tasks: { done: 4, shelved: 0, total: 4 }, time: "2026-11-27T10:06:00.000Z" }),
      `spool: 002-01_add-ralph-loop review-rejected at iteration 3 of 20 ($0.42, 15200 tokens, tasks 4/4): ${message}`
    )
  })

  it("a state without a stop message says its status; without guards, no spend", () => {
    const [notice] = follow([stateChanged({ status: "failed", stopReason: null, stopMessage: null, guards: null })]).notices
    assert.strictEqual(notice!.message, "failed")
    assert.strictEqual(notice!.outcome, "failed")
    assert.strictEqual(notice!.costUsd, null)
    assert.strictEqual(notice!.tokens, null)
  })

  it("tokens are unknown (null) when the agent reported neither cost nor tokens, as --status has it; a cost without tokens is 0 tokens", () => {
    const spend = (costUsd: number | null, tokens: number) => {
      const [notice] = follow([stateChanged({ status: "complete", stopReason: "complete", guards: { ...guards, costUsd, tokens } })]).notices
      return [notice!.costUsd, notice!.tokens]
    }
    assert.deepStrictEqual(spend(null, 0), [null, null])
    assert.deepStrictEqual(spend(0.42, 0), [0.42, 0])
    assert.deepStrictEqual(spend(null, 15200), [null, 15200])
  })

  it("a state written again with the same status tells once", () => {
    const done = stateChanged({ status: "complete", stopReason: "complete", stopMessage: "complete" })
    assert.lengthOf(follow([stateChanged({}), done, done]).notices, 1)
  })

  it("a usage limit tells when the wait begins (with when it ends), again for a new wait, and when spool gives up", () => {
    const { notices } = follow([
      stateChanged({}),
      stateChanged({ status: "waiting", resumeAt: "2026-11-27T11:00:00.000Z" }),
      stateChanged({ status: "waiting", resumeAt: "2026-11-27T11:00:00.000Z" }),
      stateChanged({ status: "running" }),
      stateChanged({ status: "waiting", resumeAt: "2026-11-27T12:00:00.000Z" }),
      stateChanged({ status: "waiting", resumeAt: "2026-11-27T13:00:00.000Z" }),
      stateChanged({ status: "usage-limit", stopReason: "usage-limit", stopMessage: "stopped: the limit did not lift", resumeAt: "2026-11-27T14:00:00.000Z" })
    ])
    assert.deepStrictEqual(notices.map((n) => [n.event, n.outcome, n.resumeAt]), [
      ["usage-limit", "waiting", "2026-11-27T11:00:00.000Z"],
      ["usage-limit", "waiting", "2026-11-27T12:00:00.000Z"],
      ["usage-limit", "waiting", "2026-11-27T13:00:00.000Z"],
      ["usage-limit", "gave-up", "2026-11-27T14:00:00.000Z"]
    ])
    assert.strictEqual(notices[0]!.message, "waiting for a usage limit to lift until 2026-11-27T11:00:00.000Z; the loop goes on by itself")
    assert.strictEqual(notices[3]!.message, "stopped: the limit did not lift")
  })

  it("a wait with no known end says so", () => {
    const [notice] = follow([stateChanged({ status: "waiting", resumeAt: null })]).notices
    assert.strictEqual(notice!.message, "waiting for a usage limit to lift; the loop goes on by itself")
  })

  it("the resume time of a state that is not a usage limit is not told", () => {
    const [notice] = follow([stateChanged({ status: "stopped", stopReason: "max-cost", resumeAt: "2026-11-27T14:00:00.000Z" })]).notices
    assert.strictEqual(notice!.resumeAt, null)
  })

  it("the same status in a new run tells again", () => {
    const done = (run: string) => stateChanged({ run, status: "complete", stopReason: "complete" })
    assert.lengthOf(follow([done("r1"), done("r2")]).notices, 2)
  })

  it("a claim a check rejected tells verify-failed, naming the check and how it failed", () => {
    const check = { command: "pnpm test", exitCode: 1, signal: null, timedOut: false, durationMs: 4200, passed: false }
    const { notices } = follow([stateChanged({}), recorded({ completionDetected: true, verify: [{ ...check, command: "pnpm lint", exitCode: 0, passed: true }, check] })])
    assert.deepStrictEqual(notices, [{
      event: "verify-failed",
      change: changeId,
      run: "r1",
      iteration: 3,
      maxIterations: 20,
      outcome: "continue",
      message: "the claim of completion at iteration 3 was rejected: pnpm test (exit 1, 4.2s)",
      costUsd: 0.42,
      tokens: 15200,
      branch: "spool/002-01_add-ralph-loop",
      commit: null,
      resumeAt: null
    }])
  })

  it("checks that passed, or none run, tell nothing; a rejected claim before any state tells what it knows", () => {
    const passed = { command: "pnpm test", exitCode: 0, signal: null, timedOut: false, durationMs: 10, passed: true }
    assert.deepStrictEqual(follow([recorded({ verify: [passed] }), recorded({})]).notices, [])
    const [alone] = follow([recorded({ commit: "abc", verify: [{ ...passed, exitCode: null, timedOut: true, passed: false }] })]).notices
    assert.strictEqual(alone!.maxIterations, null)
    assert.strictEqual(alone!.branch, null)
    assert.strictEqual(alone!.costUsd, null)
    assert.strictEqual(alone!.tokens, null)
    assert.strictEqual(alone!.commit, "abc")
    assert.match(alone!.message, /pnpm test \(timed out after/)
  })

  it("tells the run's newest commit, kept across records without one, and forgotten when a new run starts", () => {
    const end = (run: string) => stateChanged({ run, status: "complete", stopReason: "complete" })
    const { notices, followed } = follow([stateChanged({}), recorded({ commit: "c1" }), recorded({ commit: "c2" }), recorded({ commit: null }), end("r1")])
    assert.strictEqual(notices[0]!.commit, "c2")
    assert.strictEqual(followed.commit, "c2")
    assert.strictEqual(follow([stateChanged({ run: "r2" }), end("r2")], followed).notices[0]!.commit, null)
  })
})

describe("a switch of agents (--fallback)", () => {
  const switchedTo = (patch: Partial<Omit<Extract<LoopEvent, { _tag: "AgentSwitched" }>, "_tag">> = {}) =>
    LoopEvent.AgentSwitched({
      changeId,
      run: "r1",
      iteration: 4,
      from: "claude",
      to: "codex:gpt-5.5",
      why: "limited",
      held: "claude",
      until: "2026-11-27T15:00:00.000Z",
      ...patch
    })

  it("off a limited agent tells agent-switched: from which agent to which, why, and until when the limit holds it", () => {
    const { notices, followed } = follow([stateChanged({}), recorded({ commit: "c3" }), switchedTo()])
    assert.deepStrictEqual(notices, [{
      event: "agent-switched",
      change: changeId,
      run: "r1",
      iteration: 4,
      maxIterations: 20,
      outcome: "limited",
      message: "switched from claude to codex:gpt-5.5: claude is held by its usage limit until 2026-11-27T15:00:00.000Z",
      costUsd: 0.42,
      tokens: 15200,
      branch: "spool/002-01_add-ralph-loop",
      commit: "c3",
      resumeAt: null,
      agent: { from: "claude", to: "codex:gpt-5.5", why: "limited", held: "claude", until: "2026-11-27T15:00:00.000Z" }
    }])
    // What was followed stays: a switch is no state.
    assert.deepStrictEqual(followed, follow([stateChanged({}), recorded({ commit: "c3" })]).followed)
    assert.strictEqual(
      noticeLine({ ...notices[0]!, tasks: null, time: "t" }),
      "spool: 002-01_add-ralph-loop agent-switched at iteration 4 of 20 ($0.42, 15200 tokens): switched from claude to codex:gpt-5.5: claude is held by its usage limit until 2026-11-27T15:00:00.000Z"
    )
  })

  it("names the agent passed over when it is not the last one's, and a limit that holds for the rest of the run", () => {
    const [notice] = follow([switchedTo({ from: "codex:gpt-5.5", to: "gemini", held: "claude", until: null })]).notices
    assert.strictEqual(notice!.message, "switched from codex:gpt-5.5 to gemini: claude is held by its usage limit for the rest of the run")
    assert.deepStrictEqual(notice!.agent, { from: "codex:gpt-5.5", to: "gemini", why: "limited", held: "claude", until: null })
    // Before any state: what the event knows.
    assert.deepInclude(notice!, { maxIterations: null, costUsd: null, tokens: null, branch: null, commit: null })
  })

  it("back to an agent whose limit has lifted tells agent-switched too, its until null", () => {
    const [notice] = follow([stateChanged({}), switchedTo({ from: "codex:gpt-5.5", to: "claude", why: "lifted", held: "claude", until: null })]).notices
    assert.deepInclude(notice!, {
      event: "agent-switched",
      outcome: "lifted",
      message: "back to claude from codex:gpt-5.5: its usage limit has lifted",
      agent: { from: "codex:gpt-5.5", to: "claude", why: "lifted", held: "claude", until: null }
    })
  })

  it("is told by default, and no other event carries an agent", () => {
    assert.include(DEFAULT_NOTICE_EVENTS, "agent-switched")
    const [ended] = follow([stateChanged({ status: "complete", stopReason: "complete" })]).notices
    assert.notProperty(ended!, "agent")
  })

  it("a loop's own events name, with several agents, the agent of its last iteration and what each ran and spent", () => {
    const note = (agent: string, iterations: number, costUsd: number | null, tokens: number) =>
      ({ agent, harness: agent.split(":")[0]!, model: null, iterations, costUsd, tokens, limitedUntil: null })
    const several = { agent: "codex:gpt-5.5", agents: [note("claude", 2, 1.2, 900), note("codex:gpt-5.5", 1, null, 0)] }
    const [ended] = follow([stateChanged({ ...several, status: "complete", stopReason: "complete" })]).notices
    assert.deepInclude(ended!, {
      lastAgent: "codex:gpt-5.5",
      agents: [{ agent: "claude", iterations: 2, costUsd: 1.2, tokens: 900 }, { agent: "codex:gpt-5.5", iterations: 1, costUsd: null, tokens: null }]
    })
    const [waiting] = follow([stateChanged({ agents: several.agents, status: "waiting", resumeAt: "2026-11-27T15:01:00.000Z" })]).notices
    assert.deepInclude(waiting!, { lastAgent: null })
    // One agent: as ever.
    const [alone] = follow([stateChanged({ agents: [note("claude", 2, 1.2, 900)], status: "complete", stopReason: "complete" })]).notices
    assert.notProperty(alone!, "agents")
    assert.notProperty(alone!, "lastAgent")
  })
})

describe("the events a person can ask for", () => {
  it("are named, and the default leaves out only verify-failed", () => {
    assert.deepStrictEqual([...NOTICE_EVENTS].filter((event) => !DEFAULT_NOTICE_EVENTS.includes(event)), ["verify-failed"])
    assert.isTrue(isNoticeEvent("sweep-ended"))
    assert.isFalse(isNoticeEvent("completed"))
  })
})

describe("a notice's line", () => {
  const base = {
    event: "complete" as const,
    change: "002-01_add-ralph-loop",
    run: "r1",
    iteration: 4,
    maxIterations: 20,
    outcome: "complete",
    message: "complete: the promise was accepted at iteration 4",
    costUsd: 0.4242,
    tokens: 15200,
    tasks: { done: 7, shelved: 0, total: 7 },
    branch: null,
    commit: null,
    resumeAt: null,
    time: "2026-11-27T10:00:00.000Z"
  }

  it("names the change, the event, the iteration, the spend and the tasks, then the message", () => {
    assert.strictEqual(
      noticeLine(base),
      "spool: 002-01_add-ralph-loop complete at iteration 4 of 20 ($0.42, 15200 tokens, tasks 7/7): complete: the promise was accepted at iteration 4"
    )
    // Shelved tasks are done, and named.
    assert.strictEqual(
      noticeLine({ ...base, costUsd: null, tokens: null, tasks: { done: 7, shelved: 2, total: 7 } }),
      "spool: 002-01_add-ralph-loop complete at iteration 4 of 20 (tasks 7/7 (2 shelved)): complete: the promise was accepted at iteration 4"
    )
  })

  it("leaves out what is not known, and keeps to one line of at most 300 characters", () => {
    assert.strictEqual(
      noticeLine({ ...base, costUsd: null, tokens: null, tasks: { done: 0, shelved: 0, total: 0 }, maxIterations: null }),
      "spool: 002-01_add-ralph-loop complete at iteration 4: complete: the promise was accepted at iteration 4"
    )
    assert.strictEqual(
      noticeLine({ ...base, tokens: 0, tasks: null }),
      "spool: 002-01_add-ralph-loop complete at iteration 4 of 20 ($0.42): complete: the promise was accepted at iteration 4"
    )
    // Below ten cents, a cost keeps four decimals, as everywhere spool writes money.
    assert.strictEqual(
      noticeLine({ ...base, costUsd: 0.042, tokens: 0, tasks: null }),
      "spool: 002-01_add-ralph-loop complete at iteration 4 of 20 ($0.0420): complete: the promise was accepted at iteration 4"
    )
    const long = noticeLine({ ...base, tasks: null, message: `first\nsecond ${"x".repeat(400)}` })
    assert.notInclude(long, "\n")
    assert.lengthOf(long, 300)
  })
})
