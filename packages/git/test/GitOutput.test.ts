import { assert, describe, it } from "@effect/vitest"
import { parseLog, parseNumstat, parseWorktreeList } from "../src/GitOutput.js"

describe("parseNumstat", () => {
  it("adds up counts of many lines, renames under their new path and binary files without lines", () => {
    // As `git diff-tree -r -M --numstat -z` writes them.
    const output = "12\t10\tbig.txt\0" + "3\t1\t\0old name.txt\0new name.txt\0" + "-\t-\timage.bin\0"
    assert.deepStrictEqual(parseNumstat(output), {
      summary: { changedFiles: 3, files: ["big.txt", "new name.txt", "image.bin"], insertions: 15, deletions: 11 },
      paths: ["big.txt", "old name.txt", "new name.txt", "image.bin"]
    })
  })

  it("counts a rename cut off after its counts without making up its names", () => {
    assert.deepStrictEqual(parseNumstat("5\t2\t"), {
      summary: { changedFiles: 1, files: [""], insertions: 5, deletions: 2 },
      paths: [""]
    })
  })
})

describe("parseLog", () => {
  it("reads records separated by a line feed, and leaves the fields a record lacks empty", () => {
    const output = "abc1234\x1fsubject\x1fSpool Test\x1f2024-01-01T00:00:01+00:00\x1e\n" + "def5678\x1e\n"
    assert.deepStrictEqual(parseLog(output), [
      { hash: "abc1234", subject: "subject", author: "Spool Test", date: "2024-01-01T00:00:01+00:00" },
      { hash: "def5678", subject: "", author: "", date: "" }
    ])
  })
})

describe("parseWorktreeList", () => {
  it("reads git's output to its final blank line without inventing an entry", () => {
    // `git worktree list --porcelain` exactly as git 2.39 writes it: every block ends with a blank line.
    const output = "worktree /repo\nHEAD 6c97e1ce88b6cf85cf74da383b4861076604b056\nbranch refs/heads/main\n\n" +
      "worktree /d\nHEAD 6c97e1ce88b6cf85cf74da383b4861076604b056\ndetached\nlocked\n\n" +
      "worktree /gone\nHEAD 6c97e1ce88b6cf85cf74da383b4861076604b056\nbranch refs/heads/x\n" +
      "prunable gitdir file points to non-existent location\n\n"
    assert.deepStrictEqual(parseWorktreeList(output), [
      { path: "/repo", branch: "refs/heads/main", prunable: false },
      { path: "/d", branch: null, prunable: false },
      { path: "/gone", branch: "refs/heads/x", prunable: true }
    ])
  })
})
