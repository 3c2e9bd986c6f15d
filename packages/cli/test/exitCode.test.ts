import { describe, expect, it } from "@effect/vitest"
import { exitCodeOf, Outcome } from "../src/ExitCode.js"
import { describeIssue } from "../src/ralph/Requests.js"

describe("exitCodeOf: how spool ended, as the exit code README lists", () => {
  it.each([
    [Outcome.Done(), 0],
    [Outcome.LoopEnded({ status: "complete" }), 0],
    [Outcome.Failed({ usage: false }), 1],
    [Outcome.Crashed(), 1],
    [Outcome.Failed({ usage: true }), 2],
    [Outcome.LoopEnded({ status: "max-iterations" }), 3],
    [Outcome.LoopEnded({ status: "stopped" }), 4],
    [Outcome.LoopEnded({ status: "usage-limit" }), 5],
    [Outcome.Stopped({ reason: "SIGHUP" }), 129],
    [Outcome.Stopped({ reason: "SIGINT" }), 130],
    [Outcome.Interrupted(), 130],
    [Outcome.Stopped({ reason: "EPIPE" }), 141],
    [Outcome.Stopped({ reason: "SIGTERM" }), 143],
    [Outcome.SweepEnded({ ending: "complete" }), 0],
    [Outcome.SweepEnded({ ending: "failed" }), 1],
    [Outcome.SweepEnded({ ending: "not-merged" }), 1],
    [Outcome.SweepEnded({ ending: "max-iterations" }), 3],
    [Outcome.SweepEnded({ ending: "stopped" }), 4],
    [Outcome.SweepEnded({ ending: "usage-limit" }), 5],
    [Outcome.SweepEnded({ ending: "interrupted" }), 130]
  ])("%j exits %i", (outcome, code) => {
    expect(exitCodeOf(outcome)).toBe(code)
  })
})

describe("core's words about the loop's options, in flags", () => {
  it("names the field of the issue's path as the flag that sets it, whatever the words say", () => {
    expect(describeIssue({ path: ["minIterations"], message: "(5) must not be above the maximum number of iterations (3)" }))
      .toBe("--min-iterations (5) must not be above the maximum number of iterations (3)")
    expect(describeIssue({ path: ["maxCostUsd"], message: "must be above 0" })).toBe("--max-cost must be above 0")
    expect(describeIssue({ path: ["verify", 0], message: "needs a command, e.g. \"pnpm test\"" })).toBe("--verify needs a command, e.g. \"pnpm test\"")
    expect(describeIssue({ path: ["historyCount"], message: "must be 0 or more" })).toBe("--history-commits must be 0 or more")
    expect(describeIssue({ path: ["stream"], message: "maxCostUsd is a word here" })).toBe("--no-stream maxCostUsd is a word here")
  })

  it("leaves an issue without a field of the loop's options as it is", () => {
    expect(describeIssue({ path: [], message: "invalid" })).toBe("invalid")
    expect(describeIssue({ path: ["nothing"], message: "invalid" })).toBe("invalid")
  })
})
