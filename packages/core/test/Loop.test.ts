import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Ref, Stream, TestClock } from "effect"
import { ContextStore } from "../src/state/ContextStore.js"
import type { ChangeId } from "../src/domain/Domain.js"
import { ErrorJournal } from "../src/state/ErrorJournal.js"
import { GitError, GitSummary } from "../src/git/GitSummary.js"
import { HarnessEvent, outputOf, scriptedRun } from "../src/harness/HarnessService.js"
import { LoopLock } from "../src/state/LoopLock.js"
import { CONTEXT_HEADING } from "../src/prompt/PromptBuilder.js"
import { StateError } from "../src/state/StateError.js"
import { changeId, done, hangsAfter, runWith, SECRET, untilPrinted } from "./loopFixture.js"

describe("the loop", () => {
  it.effect("stops at the first iteration whose agent prints the promise", () =>
    Effect.gen(function*() {
      const { exit, records, state } = yield* runWith((r) => scriptedRun(r.iteration === 2 ? done : "working\n"))
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 2] as const))
      assert.deepStrictEqual(records.map((r) => r.outcome), ["continue", "complete"])
      assert.strictEqual(state?.status, "complete")
      assert.strictEqual(state?.iteration, 2)
    }))

  it.effect("reloads context written between iterations into the next prompt", () =>
    Effect.gen(function*() {
      const { prompts } = yield* runWith((r) =>
        r.iteration === 1
          ? Effect.as(Effect.flatMap(ContextStore, (c) => c.append(changeId, "Use port 8080.")).pipe(Effect.orDie), scriptedRun("one\n"))
          : scriptedRun(done)
      )
      assert.strictEqual(prompts.length, 2)
      assert.notInclude(prompts[0]!.prompt, CONTEXT_HEADING)
      assert.include(prompts[1]!.prompt, `${CONTEXT_HEADING}\n\nUse port 8080.\n\n---`)
    }))

  it.effect("drops the context section once the context is cleared mid-loop", () =>
    Effect.gen(function*() {
      const { prompts } = yield* runWith((r) =>
        Effect.flatMap(ContextStore, (c) =>
          (r.iteration === 1 ? c.append(changeId, "temporary hint") : r.iteration === 2 ? c.clear(changeId) : Effect.void)
            .pipe(Effect.orDie, Effect.as(scriptedRun(r.iteration === 3 ? done : "…\n"))))
      )
      assert.notInclude(prompts[0]!.prompt, CONTEXT_HEADING)
      assert.include(prompts[1]!.prompt, "temporary hint")
      assert.notInclude(prompts[2]!.prompt, CONTEXT_HEADING)
      assert.notInclude(prompts[2]!.prompt, "temporary hint")
    }))

  it.effect("accepts a promise with whitespace and newlines inside the tags", () =>
    Effect.gen(function*() {
      const { exit } = yield* runWith(() => scriptedRun("finished\n<promise>\nCOMPLETE\n</promise>\n"))
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
    }))

  it.effect("detects a promise split across two output chunks", () =>
    Effect.gen(function*() {
      const { exit, records } = yield* runWith(() => [
        HarnessEvent.AgentText({ text: "done\n<promise>COMP" }),
        HarnessEvent.AgentText({ text: "LETE</promise>" }),
        HarnessEvent.Exited({ exitCode: 0, signal: null })
      ])
      assert.deepStrictEqual(Exit.map(exit, (r) => r.iterations), Exit.succeed(1))
      assert.isTrue(records[0]!.completionDetected)
    }))

  it.effect("does not complete on a promise printed on stderr or quoted mid-line", () =>
    Effect.gen(function*() {
      const { exit, records } = yield* runWith(() => [
        outputOf("stderr", "<promise>COMPLETE</promise>\n"),
        HarnessEvent.AgentText({ text: "the rules say: print <promise>COMPLETE</promise>\n" }),
        HarnessEvent.Exited({ exitCode: 0, signal: null })
      ], { maxIterations: 2 })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("max-iterations" as const))
      assert.isFalse(records.some((r) => r.completionDetected))
    }))

  it.effect("keeps going until --min-iterations even when the promise comes earlier", () =>
    Effect.gen(function*() {
      const { exit, records, output } = yield* runWith(() => scriptedRun(done), { minIterations: 3 })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.iterations), Exit.succeed(3))
      assert.deepStrictEqual(records.map((r) => r.outcome), ["continue", "continue", "complete"])
      assert.isTrue(records.every((r) => r.completionDetected))
      assert.include(output, "--min-iterations is 3")
    }))

  it.effect("stops after --max-iterations without the promise", () =>
    Effect.gen(function*() {
      const { exit, records, state } = yield* runWith(() => scriptedRun("not yet\n"), { maxIterations: 3 })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["max-iterations", 3] as const))
      assert.strictEqual(records.length, 3)
      assert.strictEqual(state?.status, "max-iterations")
    }))

  it.effect("records a failed iteration and goes on to the next one", () =>
    Effect.gen(function*() {
      const { exit, records } = yield* runWith((r) => r.iteration === 1 ? scriptedRun("boom\n", 2) : scriptedRun(done))
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
      assert.deepStrictEqual(records.map((r) => [r.outcome, r.exitCode]), [["failed", 2], ["complete", 0]])
    }))

  it.effect("with --fail-fast stops on the first failed iteration with a LoopFailedError", () =>
    Effect.gen(function*() {
      const { exit, records, state } = yield* runWith(() => scriptedRun("boom\n", 7), { failFast: true })
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause : null
      assert.include(String(error), "LoopFailedError")
      assert.strictEqual(records.length, 1)
      assert.strictEqual(records[0]!.exitCode, 7)
      assert.strictEqual(state?.status, "failed")
    }))

  it.effect("treats an agent killed by a signal as a failed iteration", () =>
    Effect.gen(function*() {
      const { records } = yield* runWith(() => [HarnessEvent.Exited({ exitCode: null, signal: "SIGKILL" })], { maxIterations: 1 })
      assert.deepStrictEqual([records[0]!.outcome, records[0]!.signal], ["failed", "SIGKILL"])
    }))

  it.effect("with --no-stream shows no agent output but still detects the promise", () =>
    Effect.gen(function*() {
      const { exit, output } = yield* runWith(() => scriptedRun("SECRET-LIVE-OUTPUT\n<promise>COMPLETE</promise>\n"), { stream: false })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
      assert.notInclude(output, "SECRET-LIVE-OUTPUT")
      assert.include(output, "iteration 1: exit 0")
    }))

  it.effect("streams agent output live by default, between the banner and the summary", () =>
    Effect.gen(function*() {
      const { output } = yield* runWith(() => scriptedRun("LIVE-LINE\n<promise>COMPLETE</promise>\n"))
      const banner = output.indexOf("=== spool ralph: iteration 1/5")
      const live = output.indexOf("LIVE-LINE")
      const summary = output.indexOf("--- iteration 1: exit 0")
      assert.isTrue(banner >= 0 && banner < live && live < summary, output)
    }))

  it.effect("records git changes and the auto-commit hash of each iteration", () =>
    Effect.gen(function*() {
      const git = GitSummary.layerTest({
        changes: [{ changedFiles: 2, files: ["a.ts", "b.ts"], insertions: 10, deletions: 1 }, { changedFiles: 0, files: [], insertions: 0, deletions: 0 }]
      })
      const { records } = yield* runWith((r) => scriptedRun(r.iteration === 2 ? done : "x\n"), {}, git)
      assert.deepStrictEqual(records.map((r) => [r.git?.changedFiles, r.commit]), [[2, "c0ffee1"], [0, null]])
    }))

  it.effect("does not commit with --no-commit", () =>
    Effect.gen(function*() {
      const git = GitSummary.layerTest({ changes: [{ changedFiles: 1, files: ["a"], insertions: 1, deletions: 0 }] })
      const { records } = yield* runWith(() => scriptedRun(done), { commit: false }, git)
      assert.deepStrictEqual([records[0]!.git?.changedFiles, records[0]!.commit], [1, null])
    }))

  it.effect("gives every record of a run the same run id and numbers iterations from 1", () =>
    Effect.gen(function*() {
      const { records } = yield* runWith((r) => scriptedRun(r.iteration === 3 ? done : "x\n"))
      assert.deepStrictEqual(records.map((r) => r.iteration), [1, 2, 3])
      assert.strictEqual(new Set(records.map((r) => r.run)).size, 1)
    }))

  it.effect("records usage and warnings the harness reports", () =>
    Effect.gen(function*() {
      const usage = { inputTokens: 100, outputTokens: 20, reasoningTokens: 0, cacheReadTokens: 5, cacheWriteTokens: 0, cost: 0.01 }
      const { records } = yield* runWith(() => [
        HarnessEvent.Usage({ usage }),
        HarnessEvent.Usage({ usage }),
        HarnessEvent.Warning({ message: "permissions were rejected; try --allow-all" }),
        ...scriptedRun(done)
      ])
      assert.deepStrictEqual(records[0]!.usage, { ...usage, inputTokens: 200, outputTokens: 40, cacheReadTokens: 10, cost: 0.02 })
      assert.deepStrictEqual(records[0]!.warnings, ["permissions were rejected; try --allow-all"])
    }))

  it.effect("reports where the loop stands: each iteration's start, and the run's usage so far as it is reported", () =>
    Effect.gen(function*() {
      const usage = { inputTokens: 100, outputTokens: 20, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0.5 }
      const { progress } = yield* runWith((r) => [HarnessEvent.Usage({ usage }), ...scriptedRun(r.iteration === 2 ? done : "x\n")])
      assert.deepStrictEqual(progress.map((p) => [p.iteration, p.maxIterations, p.usage?.inputTokens ?? null, p.usage?.cost ?? null]), [
        [1, 5, null, null],
        [1, 5, 100, 0.5],
        [2, 5, 100, 0.5],
        [2, 5, 200, 1]
      ])
    }))

  it.effect("includes recent commits in the prompt", () =>
    Effect.gen(function*() {
      const git = GitSummary.layerTest({ commits: [{ hash: "abc1234", subject: "add parser", author: "Ada", date: "2026-11-01T10:00:00Z" }] })
      const { prompts } = yield* runWith(() => scriptedRun(done), {}, git)
      assert.include(prompts[0]!.prompt, "## Recent commits\n\n- abc1234 2026-11-01T10:00:00Z Ada: add parser")
    }))

  it.effect("journals a failed iteration with its task and output, and the next prompt shows it under Previous errors", () =>
    Effect.gen(function*() {
      const { journal, prompts } = yield* runWith((r) =>
        r.iteration === 1
          ? [outputOf("stderr", "Error: cannot find module './greet'\n"), outputOf("stdout", "npm test\n"), HarnessEvent.Exited({ exitCode: 2, signal: null })]
          : scriptedRun(done), {}, undefined, { tasks: "- [x] 1.1 a\n- [ ] 1.2 Add the entry point\n" })
      assert.strictEqual(journal.length, 1)
      assert.deepInclude(journal[0], { iteration: 1, exitCode: 2, taskId: "1.2", taskDescription: "Add the entry point", stdout: "npm test\n" })
      assert.include(journal[0]!.stderr, "cannot find module")
      assert.notInclude(prompts[0]!.prompt, "## Previous errors")
      assert.include(prompts[1]!.prompt, "## Previous errors")
      assert.include(prompts[1]!.prompt, "Error: cannot find module './greet'")
    }))

  it.effect("shows this run's failures and only the most recent --error-history ones of earlier runs", () =>
    Effect.gen(function*() {
      const old = (i: number) => ({ timestamp: "2026-11-01T00:00:00.000Z", run: "old-run", iteration: i, exitCode: 1, signal: null, timedOut: false, error: null, taskId: null, taskDescription: null, stderr: `OLD-FAILURE-${i}\n`, stdout: "" })
      const setup = Effect.flatMap(ErrorJournal, (j) => Effect.forEach([1, 2, 3, 4, 5], (i) => j.append(changeId, old(i)))).pipe(Effect.orDie, Effect.asVoid)
      const { prompts } = yield* runWith((r) => r.iteration === 1 ? scriptedRun("x\n", 1) : scriptedRun(done), { errorHistory: 2 }, undefined, { setup })
      const second = prompts[1]!.prompt
      assert.deepStrictEqual([1, 2, 3, 4, 5].map((i) => second.includes(`OLD-FAILURE-${i}`)), [false, false, false, true, true])
      assert.include(second, "iteration 1: code 1")
    }))

  it.effect("puts task progress and the current task in the prompt", () =>
    Effect.gen(function*() {
      const { prompts } = yield* runWith(() => scriptedRun(done), {}, undefined, { tasks: "- [x] 1.1 a\n- [ ] 1.2 Write the docs\n- [ ] 1.3 c\n" })
      assert.include(prompts[0]!.prompt, "## Tasks\n\nProgress: 1/3 complete")
      assert.include(prompts[0]!.prompt, "Current task: 1.2: Write the docs")
    }))

  it.effect("archives the journal when the change completes with every task done and a clean last iteration", () =>
    Effect.gen(function*() {
      const { journal, output } = yield* runWith((r) => r.iteration === 1 ? scriptedRun("x\n", 1) : scriptedRun(done), {}, undefined, { tasks: "- [x] 1.1 a\n- [-] 1.2 b\n" })
      assert.strictEqual(journal.length, 0)
      assert.match(output, /error journal archived to .*errors-\d{8}T\d{6}Z\.md; errors.md is now empty/)
    }))

  it.effect("keeps the journal when tasks remain open at completion, and warns about them", () =>
    Effect.gen(function*() {
      const { journal, output, exit } = yield* runWith((r) => r.iteration === 1 ? scriptedRun("x\n", 1) : scriptedRun(done), {}, undefined, { tasks: "- [x] 1.1 a\n- [ ] 1.2 b\n- [ ] 1.3 c\n" })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
      assert.strictEqual(journal.length, 1)
      assert.include(output, "warning: the agent claims completion, but tasks.md still has 2 open tasks")
      assert.notInclude(output, "archived")
    }))

  it.effect("sets aside a promise whose run failed, says so in the summary and the next prompt, and completes on the next clean claim", () =>
    Effect.gen(function*() {
      const { exit, journal, output, prompts, records } = yield* runWith(
        (r) => r.iteration === 1 ? scriptedRun(done, 1) : scriptedRun(done),
        {},
        undefined,
        { tasks: "- [x] 1.1 a\n" }
      )
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 2] as const))
      // The record agrees with the summary line: the failed run's claim was not taken.
      assert.deepStrictEqual(records.map((r) => [r.completionDetected, r.outcome]), [[false, "failed"], [true, "complete"]])
      assert.deepStrictEqual(records[0]!.promises.map((v) => [v.accepted, v.reason]), [[false, "the run failed"]])
      assert.include(output, "--- iteration 1: exit 1")
      assert.include(output, "promise set aside: the run failed")
      assert.include(prompts[1]!.prompt, "## Notes from the loop")
      assert.include(prompts[1]!.prompt, "In iteration 1 you printed the completion promise, but the run failed (exit code 1)")
      assert.notInclude(prompts[0]!.prompt, "## Notes from the loop")
      // The failure was journaled, and archived once a clean run completed with every task done.
      assert.include(prompts[1]!.prompt, "## Previous errors")
      assert.deepStrictEqual(journal, [])
      assert.include(output, "error journal archived")
    }))

  it.effect("redacts what the agent reports about its failure in the record, the journal and the summary", () =>
    Effect.gen(function*() {
      const { journal, output, records } = yield* runWith(
        () => [
          HarnessEvent.Warning({ message: `retrying with key ${SECRET}` }),
          HarnessEvent.Failed({ message: `API Error: 401 invalid key ${SECRET}` }),
          HarnessEvent.Exited({ exitCode: 1, signal: null })
        ],
        { maxIterations: 1 }
      )
      assert.strictEqual(records[0]!.error, "API Error: 401 invalid key [REDACTED]")
      assert.deepStrictEqual(records[0]!.warnings, ["retrying with key [REDACTED]"])
      assert.strictEqual(journal[0]!.error, "API Error: 401 invalid key [REDACTED]")
      assert.include(output, "error: API Error: 401 invalid key [REDACTED]")
      assert.notInclude(output, SECRET)
    }))

  it.effect("recognises a repeated claim after a failed run as a claim, though the journal quotes it in the prompt", () =>
    Effect.gen(function*() {
      const { exit, prompts } = yield* runWith((r) => r.iteration === 1 ? scriptedRun(done, 1) : scriptedRun(done))
      assert.include(prompts[1]!.prompt, "## Previous errors")
      assert.include(prompts[1]!.prompt, "all good\n<promise>COMPLETE</promise>")
      assert.deepStrictEqual(Exit.map(exit, (r) => r.iterations), Exit.succeed(2))
    }))

  it.effect("ignores an echo of the prompt and a deferred promise, recording why", () =>
    Effect.gen(function*() {
      const { exit, output, records } = yield* runWith(
        (r) =>
          r.iteration === 1
            ? scriptedRun(r.prompt)
            : r.iteration === 2
            ? scriptedRun("I will print <promise>COMPLETE</promise> once the tests pass\n")
            : scriptedRun("I wrote hello.txt. <promise>COMPLETE</promise>\n"),
        {}
      )
      assert.deepStrictEqual(Exit.map(exit, (r) => r.iterations), Exit.succeed(3))
      assert.deepStrictEqual(records.map((r) => r.promises.map((v) => [v.accepted, v.reason])), [
        [[false, "echo of the prompt"]],
        [[false, "deferred: \"once the tests pass\""]],
        [[true, "after a finished sentence"]]
      ])
      assert.include(output, "promise ignored: echo of the prompt")
      assert.include(output, "promise ignored: deferred: \"once the tests pass\"")
    }))

  it.effect("keeps the journal with --keep-errors", () =>
    Effect.gen(function*() {
      const { journal } = yield* runWith((r) => r.iteration === 1 ? scriptedRun("x\n", 1) : scriptedRun(done), { keepErrors: true }, undefined, { tasks: "- [x] 1.1 a\n" })
      assert.strictEqual(journal.length, 1)
    }))

  it.effect("with --require-tasks refuses the promise while tasks are open, and goes on", () =>
    Effect.gen(function*() {
      const { records, output, exit } = yield* runWith(() => scriptedRun(done), { requireTasks: true, maxIterations: 2 }, undefined, { tasks: "- [ ] 1.1 a\n" })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("max-iterations" as const))
      assert.deepStrictEqual(records.map((r) => [r.completionDetected, r.outcome]), [[true, "continue"], [true, "continue"]])
      assert.include(output, "completion refused: tasks.md still has 1 open task (--require-tasks)")
    }))

  it.effect("with --require-tasks accepts the promise once the agent has closed every task", () =>
    Effect.gen(function*() {
      const { exit } = yield* runWith(() => scriptedRun(done), { requireTasks: true }, undefined, { tasks: "- [x] 1.1 a\n- [-] 1.2 b\n" })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.iterations), Exit.succeed(1))
    }))

  it.effect("cuts a huge stream in the journal, keeping head and tail and naming the full log", () =>
    Effect.gen(function*() {
      const big = "y".repeat(64 * 1024)
      const { journal } = yield* runWith((r) =>
        r.iteration === 1
          ? [outputOf("stderr", "FIRST-LINE\n"), ...Array.from({ length: 16 }, () => outputOf("stderr", big)), outputOf("stderr", "LAST-LINE\n"), HarnessEvent.Exited({ exitCode: 1, signal: null })]
          : scriptedRun(done), { keepErrors: true })
      const stderr = journal[0]!.stderr
      assert.isTrue(stderr.startsWith("FIRST-LINE"))
      assert.isTrue(stderr.trimEnd().endsWith("LAST-LINE"))
      assert.match(stderr, /\[\.\.\. \d+ bytes cut here; the full output is in memory:.*\.\.\.\]/)
      assert.isBelow(stderr.length, 300 * 1024)
    }))

  it.effect("lists the configured number of recent commits, asking for merges only when told", () =>
    Effect.gen(function*() {
      const commits = Array.from({ length: 8 }, (_, i) => ({ hash: `h${i}`, subject: `commit ${i}`, author: "Ada", date: "2026-11-01T10:00:00Z" }))
      const calls: Array<{ count: number; includeMerges: boolean }> = []
      const { prompts } = yield* runWith(() => scriptedRun(done), { historyCount: 3 }, GitSummary.layerTest({ commits, historyCalls: calls }))
      yield* runWith(() => scriptedRun(done), { historyCount: 5, includeMerges: true }, GitSummary.layerTest({ commits, historyCalls: calls }))
      assert.deepStrictEqual(calls, [{ count: 3, includeMerges: false }, { count: 5, includeMerges: true }])
      assert.include(prompts[0]!.prompt, "- h2 2026-11-01T10:00:00Z Ada: commit 2")
      assert.notInclude(prompts[0]!.prompt, "commit 3")
      const none = yield* runWith(() => scriptedRun(done), { historyCount: 0 }, GitSummary.layerTest({ commits }))
      assert.notInclude(none.prompts[0]!.prompt, "## Recent commits")
    }))
})

describe("what the loop tells the agent and records", () => {
  it.effect("tells the agent in the next prompt that its promise was not accepted, why, and how a claim looks", () =>
    Effect.gen(function*() {
      const { exit, prompts, records } = yield* runWith((r) =>
        scriptedRun(r.iteration === 1 ? "done <promise>COMPLETE</promise> I think\n" : done)
      )
      assert.deepStrictEqual(Exit.map(exit, (r) => r.iterations), Exit.succeed(2))
      const reason = records[0]!.promises[0]!.reason
      assert.isFalse(records[0]!.completionDetected)
      assert.notInclude(prompts[0]!.prompt, "was not accepted")
      const next = prompts[1]!.prompt
      assert.include(next, "## Notes from the loop")
      assert.include(next, `In iteration 1 your completion promise was not accepted: "done <promise>COMPLETE</promise> I think" (${reason}).`)
      assert.include(next, "print <promise>COMPLETE</promise> alone on its own line")
    }))

  it.effect("tells the agent why --require-tasks refused its claim", () =>
    Effect.gen(function*() {
      const { prompts } = yield* runWith(() => scriptedRun(done), { requireTasks: true, maxIterations: 2 }, undefined, {
        tasks: "- [x] 1.1 a\n- [ ] 1.2 Write the docs\n"
      })
      assert.include(prompts[1]!.prompt, "your completion claim was refused: tasks.md still has 1 open task (the first: 1.2 Write the docs)")
    }))

  it.effect("names the change's other documents in the prompt by their paths, without quoting them", () =>
    Effect.gen(function*() {
      const { prompts } = yield* runWith(() => scriptedRun(done), {}, undefined, {
        documents: {
          "design.md": "# Design\nSECRET DESIGN TEXT\n",
          "specs/cli/spec.md": "# Spec\n",
          "notes.txt": "not markdown\n"
        }
      })
      const prompt = prompts[0]!.prompt
      assert.include(prompt, "## Other documents of the change")
      assert.include(prompt, `- .spool/changes/${changeId}/design.md\n- .spool/changes/${changeId}/specs/cli/spec.md`)
      assert.notInclude(prompt, "SECRET DESIGN TEXT")
      assert.notInclude(prompt, "notes.txt")
      assert.notInclude(prompt, `${changeId}/proposal.md`)
      assert.notInclude(prompt, `${changeId}/module.md`)
    }))

  it.effect("turns the failure breaker off with --max-consecutive-failures 0", () =>
    Effect.gen(function*() {
      const { exit, records } = yield* runWith(() => scriptedRun("broken\n", 1), { maxConsecutiveFailures: 0, maxIterations: 7 })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["max-iterations", 7] as const))
      assert.strictEqual(records.length, 7)
    }))

  it.effect("commits only what an iteration changed, says once what it leaves out, and warns when the agent edited the owner's work", () =>
    Effect.gen(function*() {
      const commitCalls: Array<ReadonlyArray<string>> = []
      const change = (files: Array<string>) => ({ changedFiles: files.length, files, insertions: 1, deletions: 0 })
      const { output, records } = yield* runWith(
        (r) => scriptedRun(r.iteration === 3 ? done : "working\n"),
        {},
        GitSummary.layerTest({
          dirty: ["README.md", "private-notes.txt", ".spool/changes/002-01_add-ralph-loop/tasks.md"],
          changes: [change(["hello.txt"]), change(["README.md", "src/a.ts"]), change(["README.md"])],
          commitCalls
        })
      )
      assert.deepStrictEqual(commitCalls, [["hello.txt"], ["README.md", "src/a.ts"], ["README.md"]])
      assert.strictEqual(output.split("the work tree holds").length - 1, 1)
      assert.include(
        output,
        "warning: the work tree holds 2 uncommitted changes outside .spool/ (README.md, private-notes.txt): spool commits only what each iteration changes"
      )
      assert.include(output, "--worktree")
      assert.deepStrictEqual(records.map((r) => r.warnings.filter((w) => w.includes("README.md")).length), [0, 1, 0])
      assert.include(records[1]!.warnings[0]!, "committed README.md with iteration 2")
      assert.deepStrictEqual(records.map((r) => r.git?.files), [["hello.txt"], ["README.md", "src/a.ts"], ["README.md"]])
    }))

  it.effect("says nothing of uncommitted work with --no-commit, and carries a refused commit's paths into the next commit", () =>
    Effect.gen(function*() {
      const quiet = yield* runWith(() => scriptedRun(done), { commit: false }, GitSummary.layerTest({ dirty: ["README.md"] }))
      assert.notInclude(quiet.output, "uncommitted change")
      const commitCalls: Array<ReadonlyArray<string>> = []
      const change = (files: Array<string>) => ({ changedFiles: files.length, files, insertions: 1, deletions: 0 })
      const { records } = yield* runWith(
        (r) => scriptedRun(r.iteration === 2 ? done : "working\n"),
        {},
        GitSummary.layerTest({ changes: [change(["a.ts"]), change(["b.ts"])], commitCalls, failingCommits: 1 })
      )
      assert.deepStrictEqual(commitCalls, [["a.ts"], ["a.ts", "b.ts"]])
      assert.deepStrictEqual(records.map((r) => r.commit), [null, "c0ffee2"])
      assert.include(records[0]!.warnings[0]!, "auto-commit failed: the pre-commit hook said no")
    }))
})

describe("how a run starts and ends", () => {
  const failingGit = (fail: "snapshot" | "dirtyPaths") =>
    Layer.effect(
      GitSummary,
      Effect.map(GitSummary, (git) => {
        const error = new GitError({ operation: fail, detail: "index.lock exists" })
        return fail === "snapshot" ? { ...git, snapshot: Effect.fail(error) } : { ...git, dirtyPaths: () => Effect.fail(error) }
      })
    ).pipe(Layer.provide(GitSummary.layerTest({ dirty: ["README.md"] })))

  it.effect("warns when it takes over the lock of a loop that no longer runs", () =>
    Effect.gen(function*() {
      const lock = Layer.succeed(LoopLock, {
        liveLoops: Effect.succeed([]),
        check: () => Effect.void,
        acquire: () => Effect.succeed(Option.some({ pid: 4242, host: "here", startedAt: "2026-11-01T09:00:00.000Z" }))
      })
      const { exit, output } = yield* runWith(() => scriptedRun(done), {}, undefined, { lock })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
      assert.include(output, "warning: took over the lock of a loop that is no longer running (pid 4242, started 2026-11-01T09:00:00.000Z)\n")
    }))

  it.effect("names the run by its start time and a short random tag, and measures --max-duration from its start", () =>
    Effect.gen(function*() {
      const start = Date.UTC(2026, 10, 1, 10, 0, 0, 123)
      const { exit, records, state } = yield* runWith(() => scriptedRun(done), { maxDurationMs: 60_000 }, undefined, {
        setup: TestClock.setTime(start)
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 1] as const))
      assert.match(records[0]!.run, /^20261101T100000Z-[0-9a-z]{4}$/)
      assert.strictEqual(state?.run, records[0]!.run)
      assert.strictEqual(state?.startedAt, "2026-11-01T10:00:00.123Z")
    }))

  it.effect("stops a run that started late on the clock once --max-duration is up, not before", () =>
    Effect.gen(function*() {
      const { exit, records } = yield* runWith(() => hangsAfter(HarnessEvent.AgentText({ text: "thinking\n" })), { maxDurationMs: 60_000, inactivityTimeoutMs: 3_600_000 }, undefined, {
        setup: TestClock.setTime(Date.UTC(2026, 10, 1, 10)),
        during: (out) => Effect.zipRight(untilPrinted(out, "=== spool ralph: iteration 1/5"), TestClock.adjust("1 minute"))
      })
      assert.deepStrictEqual(Exit.map(exit, (r) => [r.status, r.reason, r.iterations] as const), Exit.succeed(["stopped", "max-duration", 1] as const))
      assert.deepStrictEqual(records.map((r) => r.outcome), ["stopped"])
    }))

  it.effect("records where the options came from in the state file, and nothing when that is not known", () =>
    Effect.gen(function*() {
      const settings = { file: ".spool/ralph.json", fromFile: ["maxIterations"], fromCommandLine: ["verify"] }
      const known = yield* runWith(() => scriptedRun(done), {}, undefined, { settings })
      assert.deepStrictEqual(known.state?.settings, settings)
      const unknown = yield* runWith(() => scriptedRun(done))
      assert.isNotNull(unknown.state)
      assert.notProperty(unknown.state, "settings")
    }))

  it.effect("names the worktree's branch and directory in the state, and neither for a loop in the main work tree", () =>
    Effect.gen(function*() {
      const worktree = { branch: "spool/002-01", root: "/repo/.spool/.state/worktrees/002-01" }
      const inWorktree = yield* runWith(() => scriptedRun(done), {}, undefined, { worktree })
      assert.deepInclude(inWorktree.state!, { status: "complete", branch: worktree.branch, worktree: worktree.root })
      for (const main of [yield* runWith(() => scriptedRun(done)), yield* runWith(() => scriptedRun(done), {}, undefined, { worktree: null })]) {
        assert.notProperty(main.state, "branch")
        assert.notProperty(main.state, "worktree")
      }
    }))

  it.effect("leaves earlier runs' failures out of the prompt with --error-history 0", () =>
    Effect.gen(function*() {
      const old = { timestamp: "2026-11-01T00:00:00.000Z", run: "old-run", iteration: 1, exitCode: 1, signal: null, timedOut: false, error: null, taskId: null, taskDescription: null, stderr: "OLD-FAILURE\n", stdout: "" }
      const setup = Effect.flatMap(ErrorJournal, (j) => j.append(changeId, old)).pipe(Effect.orDie)
      const { prompts } = yield* runWith((r) => r.iteration === 1 ? scriptedRun("x\n", 1) : scriptedRun(done), { errorHistory: 0 }, undefined, { setup })
      assert.notInclude(prompts[0]!.prompt, "## Previous errors")
      assert.notInclude(prompts[1]!.prompt, "OLD-FAILURE")
      assert.include(prompts[1]!.prompt, "iteration 1: code 1")
    }))

  it.effect("warns and goes on without earlier errors when the journal cannot be read", () =>
    Effect.gen(function*() {
      const journal = Layer.effect(
        ErrorJournal,
        Effect.gen(function*() {
          const memory = yield* ErrorJournal
          const reads = yield* Ref.make(0)
          return {
            ...memory,
            read: (id: ChangeId) =>
              Effect.flatMap(Ref.getAndUpdate(reads, (n) => n + 1), (n) =>
                n === 0 ? Effect.fail(new StateError({ reason: "Decode", path: "errors.md", detail: "bad entry" })) : memory.read(id))
          }
        })
      ).pipe(Layer.provide(ErrorJournal.layerMemory))
      const { exit, output } = yield* runWith(() => scriptedRun(done), {}, undefined, { journal })
      assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
      assert.include(output, "warning: errors.md is damaged: bad entry (fix or delete the file); earlier errors are left out of the prompt\n")
    }))

  it.effect("records the loop as failed with an error when the journal cannot be written", () =>
    Effect.gen(function*() {
      const journal = Layer.effect(
        ErrorJournal,
        Effect.map(ErrorJournal, (memory) => ({
          ...memory,
          append: () => Effect.fail(new StateError({ reason: "Write", path: "errors.md", detail: "disk full" }))
        }))
      ).pipe(Layer.provide(ErrorJournal.layerMemory))
      const { exit, state } = yield* runWith(() => scriptedRun("boom\n", 1), {}, undefined, { journal })
      assert.isTrue(Exit.isFailure(exit))
      assert.deepInclude(state, {
        status: "failed",
        stopReason: "error",
        stopMessage: "cannot write errors.md: disk full (check permissions and free disk space)"
      })
    }))

  it.effect("records the run as interrupted when it is interrupted mid-iteration", () =>
    Effect.gen(function*() {
      const { exit, state } = yield* runWith(() => Stream.concat(Stream.make(HarnessEvent.AgentText({ text: "working\n" })), Stream.fromEffect(Effect.interrupt)))
      assert.isTrue(Exit.isInterrupted(exit))
      assert.deepInclude(state, { status: "interrupted", stopReason: "interrupted", resumeAt: null })
    }))

  it.effect("warns once outside a git repository", () =>
    Effect.gen(function*() {
      const { exit, output } = yield* runWith((r) => scriptedRun(r.iteration === 2 ? done : "x\n"), {}, GitSummary.layerNone)
      assert.deepStrictEqual(Exit.map(exit, (r) => r.iterations), Exit.succeed(2))
      assert.include(
        output,
        "warning: not inside a git repository: iterations will not be summarized or committed, and the stall breaker cannot see file changes\n"
      )
      assert.strictEqual(output.split("not inside a git repository").length - 1, 1)
    }))

  it.effect("says nothing of uncommitted work in a clean work tree, or when git cannot tell", () =>
    Effect.gen(function*() {
      for (const git of [GitSummary.layerTest(), GitSummary.layerTest({ dirty: [".spool/changes/x/tasks.md"] }), failingGit("snapshot"), failingGit("dirtyPaths")]) {
        const { exit, output } = yield* runWith(() => scriptedRun(done), {}, git)
        assert.deepStrictEqual(Exit.map(exit, (r) => r.status), Exit.succeed("complete" as const))
        assert.notInclude(output, "uncommitted")
      }
    }))

  it.effect("names the uncommitted changes outside .spool/ it leaves out, one as it, more as them", () =>
    Effect.gen(function*() {
      const one = yield* runWith(() => scriptedRun(done), {}, GitSummary.layerTest({ dirty: ["README.md"] }))
      assert.include(
        one.output,
        "warning: the work tree holds 1 uncommitted change outside .spool/ (README.md): spool commits only what each iteration changes and leaves it out " +
          "(to keep the loop apart from them, run it with --worktree)\n"
      )
      const two = yield* runWith(() => scriptedRun(done), {}, GitSummary.layerTest({ dirty: ["README.md", "notes.txt"] }))
      assert.include(
        two.output,
        "warning: the work tree holds 2 uncommitted changes outside .spool/ (README.md, notes.txt): spool commits only what each iteration changes and leaves them out " +
          "(to keep the loop apart from them, run it with --worktree)\n"
      )
    }))

  it.effect("says at which iteration the promise was accepted", () =>
    Effect.gen(function*() {
      const { exit, output, state } = yield* runWith((r) => scriptedRun(r.iteration === 2 ? done : "x\n"))
      assert.deepStrictEqual(Exit.map(exit, (r) => r.message), Exit.succeed("complete: the promise was accepted at iteration 2"))
      assert.include(output, "complete: the promise was accepted at iteration 2\n")
      assert.strictEqual(state?.stopMessage, "complete: the promise was accepted at iteration 2")
    }))

  it.effect("says what --max-iterations ran out without: the promise, or a claim that passed --verify", () =>
    Effect.gen(function*() {
      const plain = yield* runWith(() => scriptedRun("x\n"), { maxIterations: 2 })
      assert.deepStrictEqual(Exit.map(plain.exit, (r) => r.message), Exit.succeed("stopped: --max-iterations (2) reached without the completion promise"))
      const verified = yield* runWith(() => scriptedRun("x\n"), { maxIterations: 1, verify: ["npm test"] })
      assert.deepStrictEqual(
        Exit.map(verified.exit, (r) => r.message),
        Exit.succeed("stopped: --max-iterations (1) reached without a claim of completion that passed --verify")
      )
    }))

  it.effect("archives nothing when the run ends without completing, and says nothing when the journal is empty", () =>
    Effect.gen(function*() {
      const unfinished = yield* runWith(() => scriptedRun("x\n", 1), { maxIterations: 2 }, undefined, { tasks: "- [x] 1.1 a\n" })
      assert.deepStrictEqual(Exit.map(unfinished.exit, (r) => r.status), Exit.succeed("max-iterations" as const))
      assert.strictEqual(unfinished.journal.length, 2)
      assert.notInclude(unfinished.output, "archived")
      const clean = yield* runWith(() => scriptedRun(done), {}, undefined, { tasks: "- [x] 1.1 a\n" })
      assert.deepStrictEqual(Exit.map(clean.exit, (r) => r.status), Exit.succeed("complete" as const))
      assert.notInclude(clean.output, "archived")
    }))
})
