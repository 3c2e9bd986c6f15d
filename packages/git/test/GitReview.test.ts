import { describe, expect, it } from "@effect/vitest"
import { GitSummary } from "@spool/core"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import * as GitReview from "../src/GitReview.js"
import * as GitSummaryLive from "../src/GitSummaryLive.js"
import { isolateGitEnvironment, removeTemporaryDirectories, temporaryDirectory } from "./fixtures.js"

const git = (cwd: string, ...args: Array<string>) => execFileSync("git", args, { cwd, encoding: "utf8" })

const repository = () => {
  const dir = temporaryDirectory()
  git(dir, "init", "-q", "-b", "main")
  git(dir, "config", "user.name", "Test")
  git(dir, "config", "user.email", "test@example.com")
  Fs.mkdirSync(Path.join(dir, "src"))
  Fs.writeFileSync(Path.join(dir, "src/app.ts"), "export const a = 1\n")
  Fs.writeFileSync(Path.join(dir, "README.md"), "# app\n")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "start")
  return dir
}

const snapshot = (dir: string) => Effect.flatMap(GitSummary, (summary) => summary.snapshot).pipe(Effect.provide(GitSummaryLive.layer(dir)))

beforeAll(isolateGitEnvironment)
afterAll(removeTemporaryDirectories)

describe("the review's git", () => {
  it.effect("diffs two snapshots file by file: counts, a binary file, and each file's own patch", () =>
    Effect.gen(function*() {
      const dir = repository()
      const before = (yield* snapshot(dir))!
      Fs.writeFileSync(Path.join(dir, "src/app.ts"), "export const a = 2\nexport const b = 3\n")
      Fs.writeFileSync(Path.join(dir, "logo.png"), Buffer.from([0, 1, 2, 0, 255]))
      Fs.rmSync(Path.join(dir, "README.md"))
      const after = (yield* snapshot(dir))!
      const review = yield* GitReview.make(dir)
      const files = yield* review.diff(before, after)
      expect(files.map((f) => [f.path, f.added, f.deleted])).toEqual([["README.md", 0, 1], ["logo.png", null, null], ["src/app.ts", 2, 1]])
      expect(files[2]!.patch).toMatch(/^diff --git a\/src\/app.ts b\/src\/app.ts\n[\s\S]*\+export const b = 3\n$/)
      expect(files[0]!.patch).toContain("-# app")
    }))

  it.effect("checks the snapshot out in a throwaway work tree; what the reviewer writes there leaves the loop's tree, branch and refs as they were", () =>
    Effect.gen(function*() {
      const dir = repository()
      Fs.writeFileSync(Path.join(dir, "src/app.ts"), "export const a = 'uncommitted'\n")
      const at = (yield* snapshot(dir))!
      const head = git(dir, "rev-parse", "HEAD")
      const refs = git(dir, "for-each-ref")
      const review = yield* GitReview.make(dir)
      const tree = yield* Effect.scoped(Effect.gen(function*() {
        const path = yield* review.checkout(at)
        expect(Fs.readFileSync(Path.join(path, "src/app.ts"), "utf8")).toBe("export const a = 'uncommitted'\n")
        // The reviewer misbehaves: deletes a file, edits another, commits.
        Fs.rmSync(Path.join(path, "README.md"))
        Fs.writeFileSync(Path.join(path, "src/app.ts"), "hacked\n")
        git(path, "commit", "-qam", "reviewer was here")
        return path
      }))
      expect(Fs.existsSync(tree)).toBe(false)
      expect(Fs.readFileSync(Path.join(dir, "src/app.ts"), "utf8")).toBe("export const a = 'uncommitted'\n")
      expect(Fs.existsSync(Path.join(dir, "README.md"))).toBe(true)
      expect(git(dir, "rev-parse", "HEAD")).toBe(head)
      expect(git(dir, "for-each-ref")).toBe(refs)
      expect(git(dir, "status", "--porcelain")).toBe(" M src/app.ts\n")
      expect(git(dir, "worktree", "list").trim().split("\n")).toHaveLength(1)
    }))

  it.effect("makes the work tree at the place given (where a sandbox's walls let the reviewer write), and leaves that place free again", () =>
    Effect.gen(function*() {
      const dir = repository()
      const at = (yield* snapshot(dir))!
      const place = Path.join(temporaryDirectory(), "tree")
      const review = yield* GitReview.make(dir, place)
      for (const round of [1, 2]) {
        yield* Effect.scoped(Effect.gen(function*() {
          expect(yield* review.checkout(at)).toBe(place)
          expect(Fs.readFileSync(Path.join(place, "src/app.ts"), "utf8")).toBe("export const a = 1\n")
          Fs.writeFileSync(Path.join(place, `scribble-${round}.txt`), "x")
        }))
        expect(Fs.existsSync(place)).toBe(false)
      }
    }))
})
