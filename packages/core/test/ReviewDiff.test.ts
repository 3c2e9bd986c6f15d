import { assert, describe, it } from "@effect/vitest"
import type { ReviewRecord } from "../src/domain/Domain.js"
import { reviewLine } from "../src/review/Review.js"
import { cutDiff, type FileDiff } from "../src/review/ReviewDiff.js"

const file = (path: string, size: number, added: number | null = 1): FileDiff => ({
  path,
  added,
  deleted: added === null ? null : 0,
  patch: `diff --git a/${path} b/${path}\n${"+".repeat(Math.max(0, size - 30))}\n`
})

describe("the run's diff for a reviewer", () => {
  it("lists every file with its line counts, then every patch that fits", () => {
    const text = cutDiff([file("src/a.ts", 50), file("logo.png", 40, null)])
    assert.include(text, "Files changed:\n- src/a.ts (+1 -0)\n- logo.png (binary)")
    assert.include(text, "diff --git a/src/a.ts b/src/a.ts")
    assert.include(text, "diff --git a/logo.png b/logo.png")
    assert.notInclude(text, "Left out")
  })

  it("leaves out whole the patches past the budget, naming each with its size", () => {
    const big = file("src/big.ts", 500)
    const text = cutDiff([file("src/a.ts", 60), big, file("src/c.ts", 60)], 200)
    assert.include(text, "diff --git a/src/a.ts")
    assert.include(text, "diff --git a/src/c.ts")
    assert.notInclude(text, "diff --git a/src/big.ts")
    assert.include(text, `Left out of the diff below to keep it to size (1 of 3 files; read them in your work tree):\n- src/big.ts (+1 -0, ${big.patch.length} characters of diff)`)
  })

  it("is, whole: the counts, what was left out, then the patches in a fence, each ending its line", () => {
    const patch = (path: string, size: number) => `diff --git a/${path} b/${path}\n${"+".repeat(size - 25)}`
    const files: ReadonlyArray<FileDiff> = [
      { path: "a.ts", added: 2, deleted: 1, patch: patch("a.ts", 100) },
      { path: "b.ts", added: 1, deleted: 0, patch: patch("b.ts", 150) },
      { path: "c.ts", added: 1, deleted: 0, patch: `${patch("c.ts", 99)}\n` },
      { path: "d.ts", added: 3, deleted: 0, patch: patch("d.ts", 120) }
    ]
    // a fits (100), b would not (250 > 200), c fills the budget to the character (200), d is past it.
    assert.strictEqual(
      cutDiff(files, 200),
      "Files changed:\n- a.ts (+2 -1)\n- b.ts (+1 -0)\n- c.ts (+1 -0)\n- d.ts (+3 -0)\n\n" +
        "Left out of the diff below to keep it to size (2 of 4 files; read them in your work tree):\n" +
        "- b.ts (+1 -0, 150 characters of diff)\n- d.ts (+3 -0, 120 characters of diff)\n\n" +
        `\`\`\`diff\n${files[0]!.patch}\n${files[2]!.patch}\`\`\``
    )
    // Nothing left out: the counts, then the fence.
    assert.strictEqual(cutDiff(files.slice(0, 1)), `Files changed:\n- a.ts (+2 -1)\n\n\`\`\`diff\n${files[0]!.patch}\n\`\`\``)
  })

  it("says when the work is empty", () => {
    assert.strictEqual(cutDiff([]), "(no changes: the run's work is empty)")
  })
})

describe("the line a review ends with", () => {
  const review = (verdict: ReviewRecord["verdict"], findings: string | null): ReviewRecord => ({ reviewer: "claude", verdict, findings, durationMs: 1, usage: null })
  it("says what the reviewer made of the claim, each verdict its own way", () => {
    assert.strictEqual(reviewLine(review("approve", null)), "review by claude: approved")
    assert.strictEqual(reviewLine(review("changes", "- fix a\n- fix b")), "review by claude: changes asked: - fix a - fix b")
    assert.strictEqual(reviewLine(review("none", "the reviewer gave no verdict")), "review by claude: not approved: the reviewer gave no verdict")
    assert.strictEqual(reviewLine(review("limited", "usage limit reached")), "review by claude: not given: its usage limit (usage limit reached)")
    assert.strictEqual(reviewLine(review("failed", "it exited with code 1")), "review by claude: failed: it exited with code 1")
  })
})
