import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Stream, TestClock } from "effect"
import { type LoopAgent, LoopAgents } from "../src/agents/LoopAgents.js"
import { HarnessEvent, type HarnessRequest, scriptedRun } from "../src/harness/HarnessService.js"
import { done, runWith, untilPrinted } from "./loopFixture.js"

/** An agent of the loop's list that plays `script` for each of its runs, counted from 1. */
const agent = (id: string, script: (run: number) => ReadonlyArray<HarnessEvent>): LoopAgent => {
  let runs = 0
  return {
    id,
    harness: id,
    model: null,
    service: {
      name: id,
      reports: { cost: true, tokens: true },
      preflight: Effect.void,
      run: (_request: HarnessRequest) => Stream.suspend(() => Stream.fromIterable(script(++runs)))
    }
  }
}

const limitedUntil = (message: string, resetAt: number) => [
  HarnessEvent.Failed({ message }),
  HarnessEvent.Limited({ message, resetAt, retryAfterMs: null, resets: true }),
  HarnessEvent.Exited({ exitCode: 1, signal: null })
]

const MINUTE = 60_000

describe("a loop whose every agent is limited", () => {
  // claude meets its limit first, codex last: the wait is for claude, planned from claude's own reset, margin and all.
  const agents = (claudeAfter: ReadonlyArray<HarnessEvent>) => ({
    agents: [
      agent("claude", (run) => (run === 1 ? limitedUntil("claude: 5-hour limit", 10 * MINUTE) : claudeAfter)),
      agent("codex", () => limitedUntil("codex: usage limit", 30 * MINUTE))
    ] as const,
    rotate: false
  })

  it.effect("gives up on the limit that lifts first, the one met before the last, at its reset plus the margin, naming its error", () =>
    Effect.gen(function*() {
      const { exit, records, state } = yield* runWith(() => [], { maxLimitWaitMs: 0 }).pipe(
        Effect.provideService(LoopAgents, agents(scriptedRun(done)))
      )
      assert.deepStrictEqual(records.map((r) => [r.iteration, r.agent, r.outcome]), [[1, "claude", "limited"], [1, "codex", "limited"]])
      const message = "stopped: the limit lifts at 1970-01-01T00:11:00Z, past --max-limit-wait is 0 (claude: 5-hour limit); run spool again after 1970-01-01T00:11:00Z"
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.message, r.resumeAt] as const), Exit.succeed(["usage-limit", message, 11 * MINUTE] as const))
      assert.deepInclude(state, { status: "usage-limit", resumeAt: "1970-01-01T00:11:00.000Z" })
    }))

  it.effect("waits for that limit until its reset plus the margin, then runs that agent", () =>
    Effect.gen(function*() {
      const { exit, output, records } = yield* runWith(() => [], {}, undefined, {
        during: (out) =>
          Effect.gen(function*() {
            yield* untilPrinted(out, "waiting for")
            yield* TestClock.adjust(11 * MINUTE)
          })
      }).pipe(Effect.provideService(LoopAgents, agents(scriptedRun(done))))
      assert.include(output, "waiting for every agent's usage limit until 1970-01-01T00:11:00Z, when claude is free (reset time); Ctrl-C stops the loop")
      assert.deepStrictEqual(records.map((r) => [r.iteration, r.agent, r.outcome]), [[1, "claude", "limited"], [1, "codex", "limited"], [1, "claude", "complete"]])
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
    }))
})
