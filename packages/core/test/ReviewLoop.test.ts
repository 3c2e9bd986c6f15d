import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Stream, TestClock } from "effect"
import { GitError, GitSummary } from "../src/git/GitSummary.js"
import { ReviewGit } from "../src/review/ReviewGit.js"
import type { HarnessUsage } from "../src/domain/Domain.js"
import { HarnessError, HarnessEvent, scriptedRun } from "../src/harness/HarnessService.js"
import { done, hangsAfter, runWith, untilPrinted } from "./loopFixture.js"

const FINDING = "- `src/app.ts` does not handle an empty name"
const approve = "The work does what the proposal asks.\n<verdict>approve</verdict>\n"
const changes = `I read the diff.\n<verdict>changes</verdict>\n${FINDING}\n`

const spent = (cost: number): HarnessUsage => ({ inputTokens: 100, outputTokens: 10, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost })

describe("a loop with a reviewer", () => {
  it.effect("sets aside a claim the reviewer asks changes of, carries its findings to the next prompt, and completes once it approves", () =>
    Effect.gen(function*() {
      let reviews = 0
      const trees: Array<string> = []
      const seen = yield* runWith(() => scriptedRun(done), { maxIterations: 5 }, undefined, {
        reviewers: [{ id: "claude", script: () => scriptedRun(++reviews === 1 ? changes : approve) }],
        reviewTrees: trees
      })
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 2] as const))
      assert.deepStrictEqual(seen.records.map((r) => [r.iteration, r.outcome, r.completionDetected]), [[1, "changes", false], [2, "complete", true]])
      assert.deepStrictEqual(seen.records.map((r) => r.reviews?.map((v) => [v.reviewer, v.verdict, v.findings])), [
        [["claude", "changes", FINDING]],
        [["claude", "approve", null]]
      ])
      // The prompts in order: the agent's, the reviewer's, the agent's with the findings, the reviewer's.
      const [first, review, second] = seen.prompts
      assert.include(review!.prompt, "# Review of change `002-01_add-ralph-loop`")
      assert.include(review!.prompt, "diff --git a/src/app.ts b/src/app.ts")
      assert.include(review!.prompt, "## The agent's closing message\n\nall good")
      assert.strictEqual(review!.cwd, "/review/1")
      assert.notInclude(first!.prompt, "Review findings")
      assert.include(second!.prompt, `## Review findings\n\n### From claude (iteration 1)\n\n${FINDING}`)
      assert.include(second!.prompt, "the reviewer claude asked for changes")
      assert.deepStrictEqual(trees, ["+/review/1", "-/review/1", "+/review/2", "-/review/2"])
      assert.include(seen.output, "review by claude: changes asked: - `src/app.ts` does not handle an empty name\n")
      // A reviewer's text that ended its line is followed by the review's line, no blank line between.
      assert.include(seen.output, "<verdict>approve</verdict>\nreview by claude: approved\n")
      assert.include(seen.output, "complete: the promise was accepted at iteration 2 and approved by its review\n")
    }))

  it.effect("stops as review-rejected after --max-reviews rejections: no verdict, a failed reviewer, changes asked", () =>
    Effect.gen(function*() {
      let reviews = 0
      const scripts = [
        () => scriptedRun("Here is the format:\n```\n<verdict>approve</verdict>\n```\n"),
        () => scriptedRun("cannot read the repository\n", 1),
        () => scriptedRun(changes)
      ]
      const seen = yield* runWith(() => scriptedRun(done), { maxIterations: 9 }, undefined, {
        reviewers: [{ id: "codex", script: () => scripts[reviews++]!() }]
      })
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["review-rejected", 3] as const))
      assert.deepStrictEqual(seen.records.map((r) => [r.outcome, r.reviews?.[0]?.verdict]), [["changes", "none"], ["changes", "failed"], ["changes", "changes"]])
      assert.match(seen.records[0]!.reviews![0]!.findings!, /did not stand/)
      assert.strictEqual(seen.records[1]!.reviews![0]!.findings, "it exited with code 1")
      assert.include(seen.output, "stopped: the review turned the claim down 3 times (--max-reviews 3)")
      assert.strictEqual(seen.state?.status, "review-rejected")
    }))

  it.effect("counts a reviewer that hangs past --inactivity-timeout as a rejection, with its reason", () =>
    Effect.gen(function*() {
      let reviews = 0
      const seen = yield* runWith(() => scriptedRun(done), { maxIterations: 5, inactivityTimeoutMs: 60_000 }, undefined, {
        reviewers: [{ id: "claude", script: () => (++reviews === 1 ? hangsAfter() : Stream.fromIterable(scriptedRun(approve))) }],
        during: (output) => Effect.zipRight(untilPrinted(output, "reviewing the claim"), TestClock.adjust("61 seconds"))
      })
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 2] as const))
      assert.deepStrictEqual(seen.records[0]!.reviews!.map((v) => [v.verdict, v.findings]), [["failed", "it was silent for 1m00s (--inactivity-timeout)"]])
    }))

  it.effect("counts the reviewers' spend toward --max-cost: a cap reached during a review stops the loop", () =>
    Effect.gen(function*() {
      const seen = yield* runWith(
        () => [...scriptedRun(done).slice(0, 1), HarnessEvent.Usage({ usage: spent(0.6) }), ...scriptedRun(done).slice(1)],
        { maxIterations: 5, maxCostUsd: 1 },
        undefined,
        { reviewers: [{ id: "claude", script: () => hangsAfter(HarnessEvent.Usage({ usage: spent(0.5) })) }] }
      )
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.reason] as const), Exit.succeed(["stopped", "max-cost"] as const))
      assert.deepStrictEqual(seen.records.map((r) => [r.outcome, r.usage?.cost, r.reviews?.map((v) => [v.verdict, v.usage?.cost, v.findings])]), [
        ["stopped", 0.6, [["failed", 0.5, "stopped: max-cost"]]]
      ])
    }))

  it.effect("waits out a reviewer's usage limit, as for an agent's, and has it review again; a limit not waited out stops the loop", () =>
    Effect.gen(function*() {
      const limited = [
        HarnessEvent.Limited({ message: "usage limit reached", resetAt: 20_000, retryAfterMs: null, resets: true }),
        HarnessEvent.Exited({ exitCode: 1, signal: null })
      ]
      let reviews = 0
      const seen = yield* runWith(() => scriptedRun(done), { maxIterations: 5, maxLimitWaitMs: 3_600_000 }, undefined, {
        reviewers: [{ id: "claude", script: () => (++reviews === 1 ? limited : scriptedRun(approve)) }],
        during: (output) => Effect.zipRight(untilPrinted(output, "waiting for"), TestClock.adjust("2 minutes"))
      })
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 1] as const))
      assert.deepStrictEqual(seen.records[0]!.reviews!.map((v) => v.verdict), ["limited", "approve"])
      // The second review ran once the wait was over, and took no time of the test clock.
      assert.strictEqual(seen.records[0]!.reviews![1]!.durationMs, 0)
      const given = yield* runWith(() => scriptedRun(done), { maxIterations: 5, maxLimitWaitMs: 0 }, undefined, {
        reviewers: [{ id: "claude", script: () => limited }]
      })
      assert.deepStrictEqual(Exit.map(given.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["usage-limit", 1] as const))
      assert.deepStrictEqual(given.records.map((r) => [r.outcome, r.reviews?.map((v) => v.verdict)]), [["limited", ["limited"]]])
    }))

  it.effect("names how a reviewer failed: killed, its own report of an error, a work tree that could not be made", () =>
    Effect.gen(function*() {
      let reviews = 0
      const plays = [
        () => [HarnessEvent.Exited({ exitCode: null, signal: "SIGKILL" })],
        () => [HarnessEvent.Failed({ message: "the API said no" }), HarnessEvent.Exited({ exitCode: 0, signal: null })]
      ]
      const seen = yield* runWith(() => scriptedRun(done), { maxIterations: 9 }, undefined, {
        reviewers: [{ id: "claude", script: () => plays[reviews++]!() }],
        maxReviews: 2
      })
      assert.deepStrictEqual(seen.records.map((r) => r.reviews!.map((v) => [v.verdict, v.findings])), [
        [["failed", "it was killed by SIGKILL"]],
        [["failed", "it reported: the API said no"]]
      ])
      const broken = Layer.succeed(ReviewGit, {
        diff: () => Effect.succeed([]),
        checkout: () => Effect.fail(new GitError({ operation: "worktree", detail: "disk full" }))
      })
      const unmade = yield* runWith(() => scriptedRun(done), { maxIterations: 1 }, undefined, {
        reviewers: [{ id: "claude", script: () => scriptedRun(approve) }],
        reviewGit: broken
      })
      assert.deepStrictEqual(unmade.records[0]!.reviews!.map((v) => [v.verdict, v.findings]), [
        ["failed", "it could not run: no work tree could be made for it: git worktree failed: disk full"]
      ])
      // Without git there is no work to review (the run is refused before it starts): a rejection, saying so.
      let ran = 0
      const gitless = yield* runWith(() => scriptedRun(done), { maxIterations: 1 }, GitSummary.layerNone, {
        reviewers: [{ id: "claude", script: () => (ran++, scriptedRun(approve)) }]
      })
      assert.deepStrictEqual(gitless.records[0]!.reviews!.map((v) => [v.reviewer, v.verdict, v.findings]), [
        ["claude", "failed", "the work under review could not be read from git"]
      ])
      assert.strictEqual(ran, 0)
    }))

  it.effect("names an exit code before the error a reviewer reported, and a reviewer that could not be started; ends the reviewer's line", () =>
    Effect.gen(function*() {
      let reviews = 0
      const plays = [
        () => [HarnessEvent.Failed({ message: "the API said no" }), HarnessEvent.Exited({ exitCode: 1, signal: null })],
        () => [HarnessEvent.Failed({ message: "the API said no" }), HarnessEvent.Exited({ exitCode: null, signal: "SIGKILL" })],
        // The harness itself fails: the program could not be started.
        () => Stream.fail(new HarnessError({ harness: "claude", reason: "SpawnFailed", detail: "no such file" })) as unknown as Stream.Stream<HarnessEvent>,
        () => scriptedRun("Read it all. <verdict>approve</verdict>")
      ]
      const seen = yield* runWith(() => scriptedRun(done), { maxIterations: 9 }, undefined, {
        reviewers: [{ id: "claude", script: () => plays[reviews++]!() }],
        maxReviews: 5
      })
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 4] as const))
      assert.deepStrictEqual(seen.records.map((r) => r.reviews!.map((v) => [v.verdict, v.findings])), [
        [["failed", "it exited with code 1"]],
        [["failed", "it was killed by SIGKILL"]],
        [["failed", "it could not run: claude harness failed: no such file"]],
        [["approve", null]]
      ])
      // The reviewer's text did not end its line: the review's own line starts on a new one.
      assert.include(seen.output, "<verdict>approve</verdict>\nreview by claude: approved\n")
    }))

  it.effect("reviews nothing when no claim stands", () =>
    Effect.gen(function*() {
      let reviews = 0
      const seen = yield* runWith(() => scriptedRun("still working\n"), { maxIterations: 2 }, undefined, {
        reviewers: [{ id: "claude", script: () => (reviews++, scriptedRun(approve)) }]
      })
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => r.status), Exit.succeed("max-iterations" as const))
      assert.strictEqual(reviews, 0)
      assert.isTrue(seen.records.every((r) => r.reviews === undefined))
    }))
})
