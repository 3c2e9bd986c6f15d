import { assert, describe, it } from "@effect/vitest"
import { makeCapture } from "../src/harness/Capture.js"
import type { ReviewedClaim } from "../src/loop/Claim.js"
import { echoReferenceOf, promptSections } from "../src/loop/IterationPrompt.js"
import { type IterationEnd, iterationFacts, iterationRecord, journalEntryOf, outcomeOf } from "../src/loop/IterationSteps.js"
import { type PromptInput, renderPrompt } from "../src/prompt/PromptBuilder.js"
import { parseTasks } from "../src/prompt/Tasks.js"
import type { CheckRun } from "../src/verify/CheckRunner.js"

const noClaim: ReviewedClaim = { claimed: false, accepted: false, verdicts: [], lines: [], notes: [], warnings: [], rejectedBy: null, reviews: [], rejected: false, findings: [] }
const rejectedBy: CheckRun = { command: "pnpm test", exitCode: 1, signal: null, timedOut: false, durationMs: 0, passed: false, output: "1 failed\n" }

/** An iteration that ran 5 seconds and changed nothing, as `overrides` say otherwise. */
const ended = (overrides: Partial<IterationEnd> = {}): IterationEnd => ({
  runId: "run-1",
  iteration: 2,
  startedAt: 1_000,
  endedAt: 6_000,
  capture: Object.assign(makeCapture("COMPLETE", ""), { exitCode: 0 }),
  agentRun: { cut: false, failed: false, failure: "" },
  claim: noClaim,
  outcome: "continue",
  work: { summary: null, commit: null, measured: false, warnings: [] },
  verification: null,
  task: { id: "1.2", description: "Write docs", status: "open" } as never,
  logPath: "log.txt",
  redact: (text) => text.replaceAll("hunter2", "[REDACTED]"),
  error: null,
  stderr: "",
  sandboxed: false,
  agent: { id: "claude:opus", harness: "claude", model: "opus" },
  ...overrides
})

describe("what an iteration comes to", () => {
  it("takes an interruption first, then a guard's stop, a usage limit, a claim that stood, a timeout, a failure", () => {
    const capture = (fields: object) => Object.assign(makeCapture("COMPLETE", ""), fields)
    const all = { interrupted: true, failed: true, accepted: true }
    const everything = capture({ stopped: "max-cost", limited: {}, timedOut: true })
    assert.strictEqual(outcomeOf(everything, all), "interrupted")
    assert.strictEqual(outcomeOf(everything, { ...all, interrupted: false }), "stopped")
    assert.strictEqual(outcomeOf(capture({ limited: {}, timedOut: true }), { ...all, interrupted: false }), "limited")
    assert.strictEqual(outcomeOf(capture({ timedOut: true }), { ...all, interrupted: false }), "complete")
    assert.strictEqual(outcomeOf(capture({ timedOut: true }), { interrupted: false, failed: true, accepted: false }), "timeout")
    assert.strictEqual(outcomeOf(capture({}), { interrupted: false, failed: true, accepted: false }), "failed")
    assert.strictEqual(outcomeOf(capture({}), { interrupted: false, failed: false, accepted: false }), "continue")
  })
})

describe("what an iteration leaves behind", () => {
  it("records the agent's warnings, then the claim's, then the commit's, all redacted", () => {
    const end = ended({
      capture: Object.assign(makeCapture("COMPLETE", ""), { warnings: ["agent hunter2"] }),
      claim: { ...noClaim, warnings: ["open tasks"] },
      work: { summary: null, commit: "c0ffee1", measured: true, warnings: ["auto-commit hunter2"] }
    })
    const record = iterationRecord(end)
    assert.deepStrictEqual(record.warnings, ["agent [REDACTED]", "open tasks", "auto-commit [REDACTED]"])
    assert.deepStrictEqual([record.run, record.iteration, record.durationMs, record.startedAt, record.commit], ["run-1", 2, 5_000, "1970-01-01T00:00:01.000Z", "c0ffee1"])
    assert.isFalse("verify" in record)
  })

  it("says in the record that the iteration ran sandboxed, and nothing of walls where it had none", () => {
    assert.strictEqual(iterationRecord(ended({ sandboxed: true })).sandboxed, true)
    assert.isFalse("sandboxed" in iterationRecord(ended()))
  })

  it("journals nothing of an iteration that neither failed nor had its claim rejected", () => {
    assert.isNull(journalEntryOf(ended()))
  })

  it("journals a failed agent run with its output, and a rejected claim with the check's output instead", () => {
    const capture = Object.assign(makeCapture("COMPLETE", ""), { exitCode: 2 })
    capture.stdout.append(new TextEncoder().encode("out hunter2\n"))
    const failed = journalEntryOf(ended({ capture, agentRun: { cut: false, failed: true, failure: "exit code 2" }, stderr: "err\n" }))
    assert.deepInclude(failed!, { run: "run-1", iteration: 2, exitCode: 2, taskId: "1.2", stdout: "out [REDACTED]\n", stderr: "err\n", check: null })
    assert.strictEqual(failed!.timestamp, "1970-01-01T00:00:06.000Z")
    const rejected = journalEntryOf(ended({ capture, claim: { ...noClaim, rejectedBy }, stderr: "err\n" }))
    assert.deepInclude(rejected!, { stdout: "", stderr: "", check: { command: "pnpm test", result: "exit 1, 0ms", output: "1 failed\n" } })
  })

  it("names the failure by the agent's error, else its last line on stderr, or by the check that rejected the claim", () => {
    const tasks = parseTasks(null)
    const failed = { agentRun: { cut: false, failed: true, failure: "" } }
    assert.strictEqual(iterationFacts(ended({ ...failed, error: "quota gone", stderr: "x\n" }), false, tasks, tasks).failure, "quota gone")
    assert.strictEqual(iterationFacts(ended({ ...failed, stderr: "first\n  last  \n\n" }), false, tasks, tasks).failure, "last")
    assert.strictEqual(iterationFacts(ended({ claim: { ...noClaim, rejectedBy } }), false, tasks, tasks).failure, "verify failed: pnpm test (exit 1)")
    assert.strictEqual(iterationFacts(ended(), false, tasks, tasks).failure, null)
  })

  it("counts a claim, a ticked task or a commit as progress, and changed files when git could say", () => {
    const before = parseTasks("- [ ] 1.1 a\n")
    const after = parseTasks("- [x] 1.1 a\n")
    assert.isTrue(iterationFacts(ended(), true, before, before).progress)
    assert.isTrue(iterationFacts(ended(), false, before, after).progress)
    assert.isTrue(iterationFacts(ended({ work: { summary: null, commit: "c0ffee1", measured: true, warnings: [] } }), false, before, before).progress)
    assert.isNull(iterationFacts(ended(), false, before, before).progress)
    const summary = { changedFiles: 0, files: [], insertions: 0, deletions: 0 }
    assert.isFalse(iterationFacts(ended({ work: { summary, commit: null, measured: true, warnings: [] } }), false, before, before).progress)
  })
})

describe("an iteration's prompt", () => {
  const tasks = parseTasks("- [ ] 1.1 a\n")
  const entry = {
    timestamp: "2026-11-01T10:00:00.000Z", run: "run-0", iteration: 1, exitCode: 1, signal: null, timedOut: false,
    error: "boom", taskId: null, taskDescription: null, stderr: "", stdout: "", check: null
  }
  const commits = [{ hash: "h0", subject: "first", author: "Ada", date: "2026-11-01T10:00:00Z" }]

  it("orders its sections: notes, checks, tasks, other documents, previous errors, recent commits", () => {
    const sections = promptSections({ notes: ["a note"], checks: ["pnpm test"], tasks, documents: ["d.md"], documentsDir: ".spool/changes/c", journaled: [entry], commits })
    assert.deepStrictEqual(sections.map((s) => s.title), [
      "Notes from the loop", "How your claim is checked", "Tasks", "Other documents of the change", "Previous errors", "Recent commits"
    ])
    assert.deepStrictEqual(promptSections({ notes: [], checks: [], tasks: parseTasks(null), documents: [], documentsDir: ".spool/changes/c", journaled: [], commits: [] }), [])
  })

  it("puts the reviewers' findings under their own heading after the notes, each under its reviewer and iteration, trimmed", () => {
    const findings = [
      { reviewer: "claude", iteration: 2, text: "\n\n  - handle the empty name\n- and say so in the docs  \n\n" },
      { reviewer: "codex:gpt-5.5", iteration: 3, text: "   - name the file\n" }
    ]
    const sections = promptSections({ notes: ["a note"], findings, checks: [], tasks, documents: [], documentsDir: ".spool/changes/c", journaled: [], commits: [] })
    const body = "### From claude (iteration 2)\n\n- handle the empty name\n- and say so in the docs\n\n### From codex:gpt-5.5 (iteration 3)\n\n- name the file"
    assert.deepStrictEqual(sections.slice(0, 2), [{ title: "Notes from the loop", body: "- a note" }, { title: "Review findings", body }])
    const input: PromptInput = {
      iteration: 4, minIterations: 1, maxIterations: 5, completionPromise: "COMPLETE", context: "", changeId: "c", moduleId: null,
      userPrompt: "Build it.", proposal: "# P", module: null, sections
    }
    assert.include(renderPrompt(input), `## Review findings\n\n${body}\n`)
  })

  it("recognises an echo against the prompt less the previous errors, rendered by the builder that rendered the prompt", () => {
    const input: PromptInput = {
      iteration: 2, minIterations: 1, maxIterations: 5, completionPromise: "COMPLETE", context: "", changeId: "c", moduleId: null,
      userPrompt: "Build it.", proposal: "# P", module: null,
      sections: promptSections({ notes: [], checks: [], tasks, documents: [], documentsDir: ".spool/changes/c", journaled: [entry], commits: [] })
    }
    const builder = { build: (given: PromptInput) => `builder's own\n${renderPrompt(given)}` }
    const reference = echoReferenceOf(builder, input, builder.build(input))
    assert.isTrue(reference.startsWith("builder's own\n"))
    assert.include(reference, "## Tasks")
    assert.notInclude(reference, "Previous errors")
    const quiet = { ...input, sections: input.sections.filter((s) => s.title !== "Previous errors") }
    assert.strictEqual(echoReferenceOf(builder, quiet, "the prompt sent"), "the prompt sent")
  })
})
