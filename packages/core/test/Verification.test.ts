import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { type CheckRequest, type CheckRun, CheckRunner } from "../src/verify/CheckRunner.js"
import { scriptedRun } from "../src/harness/HarnessService.js"
import { PROMPT_ENTRY_BUDGET } from "../src/state/JournalEntry.js"
import { describeCheck } from "../src/domain/CheckResult.js"
import { checkFailure, checksSection, rejectionNote } from "../src/verify/Verification.js"
import { done, runWith, SECRET } from "./loopFixture.js"

type Answer = Omit<CheckRun, "command" | "passed">
const passes: Answer = { exitCode: 0, signal: null, timedOut: false, durationMs: 3_100, output: "12 tests passed\n" }
const fails = (output: string, exitCode = 1): Answer => ({ exitCode, signal: null, timedOut: false, durationMs: 4_200, output })

/** A check service that answers each command from `answers` (a list per command, one entry per call, the last repeated). */
const checks = (answers: Record<string, ReadonlyArray<Answer>>, requests: Array<CheckRequest>) => {
  const calls = new Map<string, number>()
  return CheckRunner.layerTest((request) => {
    const n = calls.get(request.command) ?? 0
    calls.set(request.command, n + 1)
    const list = answers[request.command]!
    return list[Math.min(n, list.length - 1)]!
  }, requests)
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>) => (Exit.isFailure(exit) ? Option.getOrNull(Cause.failureOption(exit.cause)) : null)

describe("verified completion (--verify)", () => {
  it.effect("completes on a claim whose checks all pass, after running each in order where the agent works", () =>
    Effect.gen(function*() {
      const requests: Array<CheckRequest> = []
      const { exit, records, output, prompts } = yield* runWith(() => scriptedRun(done), { verify: ["pnpm test", "pnpm lint"], verifyTimeoutMs: 120_000 }, undefined, {
        checks: checks({ "pnpm test": [passes], "pnpm lint": [{ ...passes, durationMs: 900 }] }, requests)
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 1] as const))
      assert.deepStrictEqual(requests.map((r) => [r.command, r.cwd, r.timeoutMs, r.env.SPOOL_ITERATION]), [
        ["pnpm test", "/tmp", 120_000, "1"],
        ["pnpm lint", "/tmp", 120_000, "1"]
      ])
      assert.deepStrictEqual(records[0]!.verify?.map((c) => [c.command, c.exitCode, c.passed]), [["pnpm test", 0, true], ["pnpm lint", 0, true]])
      assert.include(output, "| promise found, verified: pnpm test 3.1s, pnpm lint 900ms |")
      // The agent knows from the first prompt which commands decide.
      assert.include(prompts[0]!.prompt, "## How your claim is checked")
      assert.include(prompts[0]!.prompt, "- `pnpm test`\n- `pnpm lint`")
    }))

  it.effect("rejects a claim whose check fails: a failed iteration, its output journaled and quoted in the next prompt", () =>
    Effect.gen(function*() {
      const requests: Array<CheckRequest> = []
      const { exit, records, output, prompts, journal, state } = yield* runWith(() => scriptedRun(done), { verify: ["pnpm test"], keepErrors: true }, undefined, {
        checks: checks({ "pnpm test": [fails(`FAIL greet.test.js\nexpected 'Hello, Ada!' (token ${SECRET})\n`), passes] }, requests)
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 2] as const))
      assert.deepStrictEqual(records.map((r) => r.outcome), ["failed", "complete"])
      assert.deepStrictEqual(records[0]!.verify, [{ command: "pnpm test", exitCode: 1, signal: null, timedOut: false, durationMs: 4_200, passed: false }])
      assert.include(output, "--- iteration 1: exit 0 | ")
      assert.include(output, "| promise rejected: verify failed: pnpm test (exit 1, 4.2s) |")
      assert.strictEqual(journal.length, 1)
      assert.deepStrictEqual(journal[0]!.check, {
        command: "pnpm test",
        result: "exit 1, 4.2s",
        output: "FAIL greet.test.js\nexpected 'Hello, Ada!' (token [REDACTED])\n"
      })
      const next = prompts[1]!.prompt
      assert.include(next, "In iteration 1 you claimed completion, and the loop checked the claim")
      assert.include(next, "`pnpm test` failed (exit 1, 4.2s), so the claim was rejected")
      assert.include(next, "expected 'Hello, Ada!' (token [REDACTED])")
      assert.notInclude(next, SECRET)
      // The rejected claim counted as a failure (the completing iteration is not counted).
      assert.strictEqual(state?.guards?.consecutiveFailures, 1)
    }))

  it.effect("counts rejected claims toward --max-consecutive-failures and names the check when the breaker trips", () =>
    Effect.gen(function*() {
      const { exit, records } = yield* runWith(() => scriptedRun(done), { verify: ["pnpm test"], maxConsecutiveFailures: 2 }, undefined, {
        checks: checks({ "pnpm test": [fails("1 failing\n")] }, [])
      })
      assert.deepStrictEqual(records.map((r) => r.outcome), ["failed", "failed"])
      const failure = failureOf(exit)
      assert.strictEqual(failure?._tag, "LoopFailedError")
      assert.include(failure?.message ?? "", "the same error 2 times in a row (--max-consecutive-failures 2): verify failed: pnpm test (exit 1)")
    }))

  it.effect("with --fail-fast, the first rejected claim stops the loop, saying which check failed", () =>
    Effect.gen(function*() {
      const { exit } = yield* runWith(() => scriptedRun(done), { verify: ["pnpm test"], failFast: true, maxConsecutiveFailures: 1 }, undefined, {
        checks: checks({ "pnpm test": [fails("boom\n", 2)] }, [])
      })
      assert.include(failureOf(exit)?.message ?? "", "iteration 1 failed (its claim failed the check pnpm test (exit 2, 4.2s)) and --fail-fast is set")
    }))

  it.effect("a check that timed out rejects the claim as timed out", () =>
    Effect.gen(function*() {
      const { records, output, journal } = yield* runWith(() => scriptedRun(done), { verify: ["pnpm e2e"], maxIterations: 1 }, undefined, {
        checks: checks({ "pnpm e2e": [{ exitCode: null, signal: null, timedOut: true, durationMs: 600_000, output: "waiting for server\n" }] }, [])
      })
      assert.strictEqual(records[0]!.outcome, "failed")
      assert.isTrue(records[0]!.verify?.[0]?.timedOut)
      assert.include(output, "stopped: --max-iterations (1) reached without a claim of completion that passed --verify")
      assert.include(output, "promise rejected: verify failed: pnpm e2e (timed out after 10m00s)")
      assert.strictEqual(journal[0]!.check?.result, "timed out after 10m00s")
    }))

  it.effect("stops at the first check that fails: later ones do not run", () =>
    Effect.gen(function*() {
      const requests: Array<CheckRequest> = []
      const { records } = yield* runWith(() => scriptedRun(done), { verify: ["build", "test", "lint"], maxIterations: 1 }, undefined, {
        checks: checks({ build: [passes], test: [fails("red\n")], lint: [passes] }, requests)
      })
      assert.deepStrictEqual(requests.map((r) => r.command), ["build", "test"])
      assert.deepStrictEqual(records[0]!.verify?.map((c) => [c.command, c.passed]), [["build", true], ["test", false]])
    }))

  it.effect("runs no check without a claim, after a failed run, or before --min-iterations", () =>
    Effect.gen(function*() {
      const requests: Array<CheckRequest> = []
      const layer = checks({ "pnpm test": [passes] }, requests)
      const noClaim = yield* runWith(() => scriptedRun("still working\n"), { verify: ["pnpm test"], maxIterations: 2 }, undefined, { checks: layer })
      assert.deepStrictEqual(noClaim.records.map((r) => r.verify), [undefined, undefined])
      const failedRun = yield* runWith(() => scriptedRun(done, 1), { verify: ["pnpm test"], maxIterations: 1 }, undefined, { checks: layer })
      assert.strictEqual(failedRun.records[0]!.outcome, "failed")
      assert.strictEqual(requests.length, 0)
      const early = yield* runWith(() => scriptedRun(done), { verify: ["pnpm test"], minIterations: 3 }, undefined, { checks: layer })
      assert.deepStrictEqual(early.records.map((r) => r.outcome), ["continue", "continue", "complete"])
      assert.deepStrictEqual(requests.map((r) => r.env.SPOOL_ITERATION), ["3"])
    }))

  it.effect("runs no check while --require-tasks refuses the claim", () =>
    Effect.gen(function*() {
      const requests: Array<CheckRequest> = []
      const { records } = yield* runWith(() => scriptedRun(done), { verify: ["pnpm test"], requireTasks: true, maxIterations: 1 }, undefined, {
        tasks: "- [ ] 1.1 Do it\n",
        checks: checks({ "pnpm test": [passes] }, requests)
      })
      assert.strictEqual(records[0]!.outcome, "continue")
      assert.strictEqual(requests.length, 0)
    }))

  it.effect("a rejected claim's journal entry quotes the end of a long output in the prompt", () =>
    Effect.gen(function*() {
      const long = `${"x".repeat(10_000)}\nTHE LAST LINE\n`
      const { prompts } = yield* runWith(() => scriptedRun(done), { verify: ["t"], maxIterations: 2 }, undefined, {
        checks: checks({ t: [fails(long)] }, [])
      })
      const next = prompts[1]!.prompt
      assert.include(next, "THE LAST LINE")
      assert.isBelow(next.length, prompts[0]!.prompt.length + 2 * PROMPT_ENTRY_BUDGET + 2_000)
    }))
})

describe("what the loop says of checks", () => {
  const run = (overrides: Partial<CheckRun> = {}): CheckRun => ({
    command: "pnpm test",
    exitCode: 1,
    signal: null,
    timedOut: false,
    durationMs: 4_200,
    passed: false,
    output: "1 failing\n",
    ...overrides
  })

  it("describes how a check ended: by its exit code, a signal, or the timeout", () => {
    assert.strictEqual(describeCheck(run()), "exit 1, 4.2s")
    assert.strictEqual(describeCheck(run({ exitCode: null, signal: "SIGSEGV", durationMs: 1_000 })), "killed by SIGSEGV, 1.0s")
    assert.strictEqual(describeCheck(run({ exitCode: null, signal: "SIGTERM", timedOut: true, durationMs: 600_000 })), "timed out after 10m00s")
  })

  it("names a failed check the same way each time it fails the same way", () => {
    assert.strictEqual(checkFailure(run()), "verify failed: pnpm test (exit 1)")
    assert.strictEqual(checkFailure(run({ exitCode: null, signal: "SIGKILL" })), "verify failed: pnpm test (SIGKILL)")
    assert.strictEqual(checkFailure(run({ exitCode: null, signal: "SIGTERM", timedOut: true })), "verify failed: pnpm test (timed out)")
  })

  it("tells the agent which check rejected its claim, among all the checks, and what to do", () => {
    assert.strictEqual(
      rejectionNote(3, ["pnpm test", "pnpm lint"], run({ command: "pnpm lint" })),
      "In iteration 3 you claimed completion, and the loop checked the claim by running the project's checks " +
        "(`pnpm test`, `pnpm lint`, in that order; all must pass). " +
        "`pnpm lint` failed (exit 1, 4.2s), so the claim was rejected; its output is under \"Previous errors\" below. " +
        "Fix what it reports, run `pnpm lint` yourself until it passes, and only then claim completion again."
    )
  })

  it("tells the agent in every prompt which commands decide a claim", () => {
    assert.deepStrictEqual(checksSection(["pnpm test", "pnpm lint"]), {
      title: "How your claim is checked",
      body: "When you claim completion, the loop runs these commands in the repository, in this order, and believes the claim only if every one exits 0:\n" +
        "- `pnpm test`\n- `pnpm lint`\n" +
        "Run them yourself before you claim completion."
    })
  })

  it.effect("prints each check as it starts it", () =>
    Effect.gen(function*() {
      const { output } = yield* runWith(() => scriptedRun(done), { verify: ["pnpm test", "pnpm lint"] })
      assert.include(output, "checking the claim: pnpm test\n")
      assert.include(output, "checking the claim: pnpm lint\n")
      assert.isBelow(output.indexOf("checking the claim: pnpm test"), output.indexOf("checking the claim: pnpm lint"))
    }))
})
