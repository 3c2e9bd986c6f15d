import { assert, describe, it } from "@effect/vitest"
import { describeMerge } from "../src/git/Merges.js"

describe("describeMerge", () => {
  it("says what became of each merge as the sweep's summary shows it", () => {
    assert.strictEqual(describeMerge({ _tag: "Merged", commit: "0123456789abcdef", workTree: "moved" }, "main"), "merged into main (01234567)")
    assert.strictEqual(describeMerge({ _tag: "AlreadyMerged" }, "main"), "already in main")
    assert.strictEqual(describeMerge({ _tag: "Conflict", paths: ["src/app.ts"] }, "main"), "not merged: conflict in src/app.ts")
    assert.strictEqual(
      describeMerge({ _tag: "Conflict", paths: ["a", "b", "c", "d", "e"] }, "main"),
      "not merged: conflict in a, b, c and 2 more"
    )
    assert.strictEqual(describeMerge({ _tag: "ChecksFailed", check: "pnpm test" }, "main"), "not merged: pnpm test failed on the merged tree")
    assert.strictEqual(describeMerge({ _tag: "BaseMoved" }, "main"), "not merged: main moved meanwhile and cannot be fast-forwarded")
    assert.match(describeMerge({ _tag: "WorkTreeDirty", path: "/repo" }, "main"), /^not merged: main is checked out in \/repo with uncommitted changes/)
  })
})
