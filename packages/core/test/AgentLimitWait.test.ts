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

describe("a loop whose agents a limit of an earlier iteration still holds", () => {
  // Iteration 1: claude meets its limit (an hour), codex runs. Iteration 2: codex meets a longer one,
  // so the first free is claude, held by a limit this loop met before this iteration.
  const agents = (claudeAfter: ReadonlyArray<HarnessEvent>) => ({
    agents: [
      agent("claude", (run) => (run === 1 ? limitedUntil("claude: 5-hour limit", 60 * MINUTE) : claudeAfter)),
      agent("codex", (run) => (run === 1 ? scriptedRun("step one\n") : limitedUntil("codex: usage limit", 120 * MINUTE)))
    ] as const,
    rotate: false
  })

  it.effect("waits for it as an earlier limit of this loop, then runs that agent", () =>
    Effect.gen(function*() {
      const { exit, output, records } = yield* runWith(() => [], { maxIterations: 3 }, undefined, {
        during: (out) =>
          Effect.gen(function*() {
            yield* untilPrinted(out, "waiting for")
            yield* TestClock.adjust(60 * MINUTE)
          })
      }).pipe(Effect.provideService(LoopAgents, agents(scriptedRun(done))))
      assert.include(output, "waiting for every agent's usage limit until 1970-01-01T01:00:00Z, when claude is free (an earlier limit); Ctrl-C stops the loop\n")
      assert.deepStrictEqual(records.map((r) => [r.iteration, r.agent, r.outcome]), [
        [1, "claude", "limited"],
        [1, "codex", "continue"],
        [2, "codex", "limited"],
        [2, "claude", "complete"]
      ])
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
    }))

  it.effect("gives up on it past --max-limit-wait, naming the limit this loop met", () =>
    Effect.gen(function*() {
      const { exit } = yield* runWith(() => [], { maxIterations: 3, maxLimitWaitMs: 0 }).pipe(
        Effect.provideService(LoopAgents, agents(scriptedRun(done)))
      )
      const message = "stopped: the limit lifts at 1970-01-01T01:00:00Z, past --max-limit-wait is 0 (the usage limit claude met); run spool again after 1970-01-01T01:00:00Z"
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations, r.message] as const), Exit.succeed(["usage-limit", 2, message] as const))
    }))

  it.effect("with every agent held for the rest of the run, stops at once: the first agent's limit does not reset by waiting", () =>
    Effect.gen(function*() {
      const quota = (message: string) => [HarnessEvent.Limited({ message, resetAt: null, retryAfterMs: null, resets: false }), HarnessEvent.Exited({ exitCode: 1, signal: null })]
      const { exit, records } = yield* runWith(() => [], { maxIterations: 3 }).pipe(
        Effect.provideService(LoopAgents, {
          agents: [
            agent("claude", () => quota("claude: quota exceeded")),
            agent("codex", (run) => (run === 1 ? scriptedRun("step one\n") : quota("codex: quota exceeded")))
          ] as const,
          rotate: false
        })
      )
      assert.deepStrictEqual(records.map((r) => [r.iteration, r.agent, r.outcome]), [[1, "claude", "limited"], [1, "codex", "continue"], [2, "codex", "limited"]])
      const message = "stopped: the usage limit of claude does not reset by waiting (the usage limit claude met); run spool again once it is lifted"
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations, r.message, r.resumeAt] as const), Exit.succeed(["usage-limit", 2, message, null] as const))
    }))
})
