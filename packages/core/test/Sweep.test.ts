import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Ref, TestClock } from "effect"
import type { LoopResult } from "../src/loop/LoopResult.js"
import { LockError } from "../src/state/LoopLock.js"
import { type RunFacts, runSweep, type SweepReport, type SweepRunner } from "../src/sweep/Sweep.js"
import type { Readiness } from "../src/sweep/SweepPolicy.js"

const ready: Readiness = { _tag: "Ready" }
const plan = (ids: ReadonlyArray<string>, concurrency = 1, readiness: Record<string, Readiness> = {}) => ({
  changes: ids.map((id) => ({ id, readiness: readiness[id] ?? ready })),
  concurrency
})

const ended = (status: LoopResult["status"], iterations = 1): LoopResult => ({
  run: "run-1",
  status,
  reason: status === "stopped" ? "max-cost" : status,
  iterations,
  message: `${status}: ended`,
  resumeAt: null
})

const facts = (changeId: string): RunFacts => ({
  iterations: 2,
  costUsd: 0.5,
  tokens: 1000,
  branch: `spool/${changeId}`,
  lastCommit: `commit-of-${changeId}`,
  agents: []
})

const tagged = (tag: string, message: string) => Object.assign(new Error(message), { _tag: tag })

const runner = (
  runChange: SweepRunner<Error>["runChange"],
  merge: SweepRunner<Error>["merge"] = null
): SweepRunner<Error> => ({ runChange, facts: (id) => Effect.succeed(facts(id)), merge })

const capture = () => {
  const reports: Array<SweepReport> = []
  return { reports, report: (report: SweepReport) => Effect.sync(() => void reports.push(report)) }
}

describe("runSweep", () => {
  it.effect("goes on past a change that fails or stops, and names the ending that matters most", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const { reports, report } = capture()
      const result = yield* runSweep(plan(["a", "b", "c", "d"]), runner((id) => {
        ran.push(id)
        return id === "a"
          ? Effect.fail(tagged("LoopFailedError", "3 iterations failed in a row"))
          : Effect.succeed(ended(id === "b" ? "stopped" : "complete"))
      }), report)
      assert.deepStrictEqual(ran, ["a", "b", "c", "d"])
      assert.deepStrictEqual(result.rows.map((row) => row.outcome), ["failed", "stopped", "complete", "complete"])
      assert.strictEqual(result.rows[0]!.message, "3 iterations failed in a row")
      // A failed change's own records count; only a busy change's are another loop's.
      assert.strictEqual(result.rows[0]!.lastCommit, "commit-of-a")
      assert.strictEqual(result.rows[2]!.lastCommit, "commit-of-c")
      assert.strictEqual(result.rows[2]!.costUsd, 0.5)
      assert.strictEqual(result.ending, "failed")
      assert.deepStrictEqual(reports, [result])
    }))

  it.effect("records a change whose loop dies with a defect as failed, with its message, and lets the loops beside it complete", () =>
    Effect.gen(function*() {
      // b goes on only once the sweep has read a's records after its death: a defect that ended the sweep would interrupt b first.
      const aRecorded = yield* Deferred.make<void>()
      const { reports, report } = capture()
      const result = yield* runSweep(plan(["a", "b", "c"], 2), {
        runChange: (id) =>
          id === "a"
            ? Effect.die(new Error("the agent's output could not be read\nat line 3"))
            : id === "b"
            ? Effect.as(Deferred.await(aRecorded), ended("complete"))
            : Effect.die("not an error"),
        facts: (id) => Effect.as(id === "a" ? Deferred.succeed(aRecorded, undefined) : Effect.void, facts(id)),
        merge: null
      }, report)
      assert.deepStrictEqual(result.rows.map((row) => [row.changeId, row.outcome, row.message]), [
        ["a", "failed", "unexpected failure: the agent's output could not be read"],
        ["b", "complete", "complete: ended"],
        ["c", "failed", "unexpected failure: not an error"]
      ])
      // Its own records count, as a failed change's do.
      assert.strictEqual(result.rows[0]!.lastCommit, "commit-of-a")
      assert.strictEqual(result.ending, "failed")
      assert.deepStrictEqual(reports, [result])
    }))

  it.effect("a defect is the change's failure even when it looks like another loop's lock", () =>
    Effect.gen(function*() {
      const { report } = capture()
      const result = yield* runSweep(
        plan(["a", "b"]),
        runner((id) => Effect.die(id === "a" ? tagged("LockError", "a loop is already running on a") : null)),
        report
      )
      assert.deepStrictEqual(result.rows.map((row) => [row.outcome, row.message, row.lastCommit]), [
        ["failed", "unexpected failure: a loop is already running on a", "commit-of-a"],
        ["failed", "unexpected failure: null", "commit-of-b"]
      ])
    }))

  it.effect("an interruption inside one change's loop interrupts the whole sweep, as Ctrl-C does", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const ran: Array<string> = []
      const { reports, report } = capture()
      const exit = yield* Effect.exit(runSweep(plan(["a", "b", "c"], 2), runner((id) => {
        ran.push(id)
        return id === "a"
          ? Effect.zipRight(Deferred.await(started), Effect.interrupt)
          : Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      }), report))
      assert.isTrue(Exit.isInterrupted(exit))
      assert.deepStrictEqual(ran, ["a", "b"])
      assert.deepStrictEqual(reports[0]!.rows.map((row) => row.outcome), ["interrupted", "interrupted", "not-started"])
      assert.strictEqual(reports[0]!.ending, "interrupted")
    }))

  it.effect("skips a change another loop holds as busy, and one already complete without running it", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const { report } = capture()
      const result = yield* runSweep(
        plan(["a", "b", "c"], 1, { c: { _tag: "Complete", why: "its loop completed" } }),
        runner((id) => {
          ran.push(id)
          return id === "a"
            ? Effect.fail(new LockError({ changeId: "a", owner: { pid: 7, host: "here", startedAt: "2026-01-01T00:00:00Z" }, path: "a/lock" }))
            : Effect.succeed(ended("complete"))
        }),
        report
      )
      assert.deepStrictEqual(ran, ["a", "b"])
      assert.deepStrictEqual(result.rows.map((row) => row.outcome), ["busy", "complete", "already-complete"])
      assert.strictEqual(result.rows[0]!.lastCommit, null)
      assert.strictEqual(result.rows[2]!.message, "already complete: its loop completed")
      assert.strictEqual(result.ending, "complete")
    }))

  it.effect("runs up to --max-parallel changes at once", () =>
    Effect.gen(function*() {
      const inFlight = yield* Ref.make(0)
      const most = yield* Ref.make(0)
      const { report } = capture()
      yield* runSweep(plan(["a", "b", "c", "d", "e"], 2), runner(() =>
        Effect.gen(function*() {
          const now = yield* Ref.updateAndGet(inFlight, (n) => n + 1)
          yield* Ref.update(most, (m) => Math.max(m, now))
          yield* Effect.yieldNow()
          yield* Effect.yieldNow()
          yield* Ref.update(inFlight, (n) => n - 1)
          return ended("complete")
        })), report)
      assert.strictEqual(yield* Ref.get(most), 2)
    }))

  it.effect("merges completed changes one at a time, in the order they complete", () =>
    Effect.gen(function*() {
      const gates = { a: yield* Deferred.make<void>(), b: yield* Deferred.make<void>() }
      const firstMerged = yield* Deferred.make<void>()
      const merged: Array<string> = []
      const { report } = capture()
      const sweep = yield* Effect.fork(runSweep(
        plan(["a", "b", "c"], 3),
        runner(
          (id) =>
            id === "c"
              ? Effect.succeed(ended("max-iterations"))
              : Effect.as(Deferred.await(gates[id as "a" | "b"]), ended("complete")),
          (id) =>
            Effect.sync(() => {
              merged.push(id)
              return { merged: id === "b", text: id === "b" ? "merged b" : "not merged: conflict in a.txt" }
            }).pipe(Effect.zipLeft(Deferred.succeed(firstMerged, undefined)))
        ),
        report
      ))
      // b completes first, and is merged before a is let complete.
      yield* Deferred.succeed(gates.b, undefined)
      yield* Deferred.await(firstMerged)
      yield* Deferred.succeed(gates.a, undefined)
      const result = yield* Fiber.join(sweep)
      assert.deepStrictEqual(merged, ["b", "a"])
      assert.deepStrictEqual(result.rows.map((row) => row.merge?.text ?? null), ["not merged: conflict in a.txt", "merged b", null])
      // A completed change left unmerged is what a person must see to first, before a cap.
      assert.strictEqual(result.ending, "not-merged")
    }))

  it.effect("merges again a change completed earlier whose merge was not made, without running its loop", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const merged: Array<string> = []
      const { report } = capture()
      const result = yield* runSweep(
        plan(["a", "b", "c"], 1, { b: { _tag: "Unmerged", why: "not merged: conflict in b.txt" }, c: { _tag: "Unmerged", why: "not merged: conflict in c.txt" } }),
        runner(
          (id) => Effect.sync(() => void ran.push(id)).pipe(Effect.as(ended("complete"))),
          (id) => Effect.sync(() => {
            merged.push(id)
            return id === "c" ? { merged: false, text: "not merged: conflict in c.txt" } : { merged: true, text: `merged ${id}` }
          })
        ),
        report
      )
      assert.deepStrictEqual(ran, ["a"])
      assert.deepStrictEqual(merged, ["a", "b", "c"])
      assert.deepStrictEqual(result.rows[1], {
        changeId: "b", outcome: "already-complete", message: "already complete: its loop completed", durationMs: 0,
        merge: { merged: true, text: "merged b" }, iterations: 0, costUsd: null, tokens: null, branch: "spool/b", lastCommit: "commit-of-b", agents: []
      })
      assert.deepStrictEqual(result.rows.map((row) => row.merge?.merged), [true, true, false])
      // Its merge failing again is what the sweep ends on.
      assert.strictEqual(result.ending, "not-merged")
    }))

  it.effect("without merging, lists a change completed earlier whose merge was not made as already complete, saying why", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const { report } = capture()
      const result = yield* runSweep(
        plan(["a", "b"], 1, { b: { _tag: "Unmerged", why: "not merged: conflict in b.txt" } }),
        runner((id) => Effect.sync(() => void ran.push(id)).pipe(Effect.as(ended("complete")))),
        report
      )
      assert.deepStrictEqual(ran, ["a"])
      assert.deepStrictEqual(result.rows[1], {
        changeId: "b", outcome: "already-complete", message: "already complete: its loop completed; not merged: conflict in b.txt", durationMs: 0,
        merge: null, iterations: 0, costUsd: null, tokens: null, branch: null, lastCommit: null, agents: []
      })
      assert.strictEqual(result.ending, "complete")
    }))

  it.effect("starts no change after one gave up on a usage limit", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const { report } = capture()
      const result = yield* runSweep(plan(["a", "b", "c"]), runner((id) => {
        ran.push(id)
        return Effect.succeed(ended(id === "a" ? "usage-limit" : "complete"))
      }), report)
      assert.deepStrictEqual(ran, ["a"])
      assert.deepStrictEqual(result.rows.map((row) => row.outcome), ["usage-limit", "not-started", "not-started"])
      assert.strictEqual(result.rows[1]!.message, "not started: the usage limit met by an earlier change")
      assert.strictEqual(result.ending, "usage-limit")
    }))

  it.effect("when interrupted, reports the changes running then as interrupted and the rest as not started", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const { reports, report } = capture()
      const sweep = yield* Effect.fork(runSweep(plan(["a", "b", "c"], 2), runner((id) =>
        id === "a"
          ? Effect.succeed(ended("complete"))
          : Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      ), report))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(sweep)
      assert.strictEqual(reports.length, 1)
      assert.deepStrictEqual(reports[0]!.rows.map((row) => row.outcome), ["complete", "interrupted", "interrupted"])
      assert.strictEqual(reports[0]!.ending, "interrupted")
    }))

  it.effect("measures each change's time on the clock, the interrupted ones' to the interruption", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(Duration.seconds(100))
      const started = yield* Deferred.make<void>()
      const { reports, report } = capture()
      const sweep = yield* Effect.fork(runSweep(plan(["a", "b"], 2), runner((id) =>
        id === "a"
          ? Effect.as(Effect.sleep(Duration.seconds(3)), ended("complete"))
          : Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      ), report))
      yield* Deferred.await(started)
      yield* TestClock.adjust(Duration.seconds(5))
      yield* Fiber.interrupt(sweep)
      assert.deepStrictEqual(reports[0]!.rows.map((row) => [row.outcome, row.durationMs]), [["complete", 3000], ["interrupted", 5000]])
    }))

  it.effect("says a change that was not ready was not started, and why", () =>
    Effect.gen(function*() {
      const { report } = capture()
      const result = yield* runSweep(
        plan(["a", "b"], 1, { b: { _tag: "NotReady", why: "no proposal.md" } }),
        runner(() => Effect.succeed(ended("complete"))),
        report
      )
      assert.deepStrictEqual(result.rows.map((row) => [row.outcome, row.message]), [["complete", "complete: ended"], ["not-started", "not ready: no proposal.md"]])
      assert.strictEqual(result.ending, "complete")
    }))

  it.effect("words a failure that has no message of its own by what it is", () =>
    Effect.gen(function*() {
      const { report } = capture()
      const result = yield* runSweep(plan(["a", "b"]), runner((id) => Effect.fail(id === "a" ? new Error("") : new Error("first line\nsecond line"))), report)
      assert.deepStrictEqual(result.rows.map((row) => row.message), ["Error", "first line"])
    }))

  it.effect("ends complete when every completed change was merged", () =>
    Effect.gen(function*() {
      const { report } = capture()
      const result = yield* runSweep(
        plan(["a", "b"]),
        runner(() => Effect.succeed(ended("complete")), (id) => Effect.succeed({ merged: true, text: `merged ${id}` })),
        report
      )
      assert.deepStrictEqual(result.rows.map((row) => row.merge?.text), ["merged a", "merged b"])
      assert.strictEqual(result.ending, "complete")
    }))

  it.effect("leaves a change whose merge dies with a defect unmerged, and merges the next", () =>
    Effect.gen(function*() {
      const { report } = capture()
      const result = yield* runSweep(
        plan(["a", "b"]),
        runner(
          () => Effect.succeed(ended("complete")),
          (id) => (id === "a" ? Effect.die(new Error("git vanished\nmid-merge")) : Effect.succeed({ merged: true, text: `merged ${id}` }))
        ),
        report
      )
      assert.deepStrictEqual(result.rows.map((row) => row.merge), [
        { merged: false, text: "not merged: unexpected failure: git vanished" },
        { merged: true, text: "merged b" }
      ])
      assert.strictEqual(result.ending, "not-merged")
    }))

  it.effect("says a merge the interruption cut short was not made", () =>
    Effect.gen(function*() {
      const merging = yield* Deferred.make<void>()
      const { reports, report } = capture()
      const sweep = yield* Effect.fork(runSweep(
        plan(["a"]),
        runner(() => Effect.succeed(ended("complete")), () => Effect.zipRight(Deferred.succeed(merging, undefined), Effect.never)),
        report
      ))
      yield* Deferred.await(merging)
      yield* Fiber.interrupt(sweep)
      assert.deepStrictEqual(reports[0]!.rows[0]!.merge, { merged: false, text: "not merged: interrupted while merging" })
      assert.strictEqual(reports[0]!.ending, "not-merged")
    }))
})
