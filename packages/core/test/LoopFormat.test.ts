import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { IterationRecord } from "../src/domain/Domain.js"
import { asRecordedNow, describePromise, formatSummary, promiseFate } from "../src/loop/LoopFormat.js"

const check = { command: "pnpm test", exitCode: 1, signal: null, timedOut: false, durationMs: 4213, passed: false }

/** A claim `--verify` rejected, as history.jsonl held it before such claims were recorded as set aside. */
const olderLine = JSON.stringify({
  run: "20261101T100000Z-k3f9",
  iteration: 2,
  startedAt: "2026-11-01T10:00:00.000Z",
  durationMs: 72000,
  exitCode: 0,
  signal: null,
  completionDetected: true,
  promises: [
    { accepted: true, reason: "alone on its line", text: "<promise>COMPLETE</promise>" },
    { accepted: false, reason: "inside a sentence", text: "I print <promise>COMPLETE</promise> later" }
  ],
  outcome: "failed",
  git: { changedFiles: 1, files: ["a.ts"], insertions: 1, deletions: 0 },
  commit: "0f9e8d7c6b5a4f3e",
  usage: null,
  error: null,
  warnings: [],
  verify: [check]
})

const older = Schema.decodeUnknownSync(IterationRecord)(JSON.parse(olderLine))

/** The same iteration as spool records it now. */
const now: IterationRecord = {
  ...older,
  completionDetected: false,
  promises: [
    { accepted: false, reason: "verify failed: pnpm test (exit 1)", text: "<promise>COMPLETE</promise>" },
    { accepted: false, reason: "inside a sentence", text: "I print <promise>COMPLETE</promise> later" }
  ]
}

describe("a claim the checks rejected, in the history", () => {
  it("reads the same, as written now and as written before: rejected, with the same summary line", () => {
    for (const record of [now, older]) {
      assert.strictEqual(promiseFate(record), "rejected")
      assert.strictEqual(describePromise(record), "promise rejected: verify failed: pnpm test (exit 1, 4.2s)")
      assert.strictEqual(
        formatSummary(record),
        "--- iteration 2: exit 0 | 1m12s | promise rejected: verify failed: pnpm test (exit 1, 4.2s) | 1 file changed | commit 0f9e8d7c6b5a | -> failed"
      )
    }
  })

  it("reads an older record as one written now, and leaves a record written now, or any other, as it is", () => {
    assert.deepStrictEqual(asRecordedNow(older), now)
    assert.strictEqual(asRecordedNow(now), now)
    const verified = { ...older, outcome: "complete" as const, verify: [{ ...check, exitCode: 0, passed: true }] }
    assert.strictEqual(asRecordedNow(verified), verified)
    assert.strictEqual(promiseFate(verified), "found")
    const { verify: _checks, ...unverified } = older
    const unchecked = { ...unverified, outcome: "continue" as const }
    assert.strictEqual(asRecordedNow(unchecked), unchecked)
  })

  it("tells a claim set aside from one rejected, though both are recorded alike", () => {
    const { verify: _checks, ...unverified } = now
    const setAside: IterationRecord = { ...unverified, exitCode: 1, promises: [{ ...now.promises[0]!, reason: "the run failed" }] }
    assert.strictEqual(promiseFate(setAside), "aside")
    assert.strictEqual(describePromise(setAside), "promise set aside: the run failed")
  })
})

describe("a claim its review turned down, in the history", () => {
  it("is declined, not ignored: the reviewer's word is the reason; with checks, they say that it was found and passed them", () => {
    const reason = "review by codex:gpt-5.5: changes asked: add a test for the parser"
    const declined: IterationRecord = {
      ...now,
      outcome: "changes",
      verify: [],
      promises: [{ accepted: false, reason, text: "<promise>COMPLETE</promise>" }],
      reviews: [{ reviewer: "codex:gpt-5.5", verdict: "changes", findings: "add a test for the parser", durationMs: 900, usage: null }]
    }
    assert.strictEqual(promiseFate(declined), "declined")
    assert.strictEqual(describePromise(declined), `promise declined: ${reason}`)
    const checked = { ...declined, verify: [{ ...check, exitCode: 0, passed: true }] }
    assert.strictEqual(promiseFate(checked), "declined")
    assert.strictEqual(describePromise(checked), "promise found, verified: pnpm test 4.2s")
    assert.strictEqual(promiseFate({ ...declined, outcome: "continue" }), "ignored")
  })
})
