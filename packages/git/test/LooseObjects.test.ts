import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { looseObjects } from "../src/LooseObjects.js"

const git = (cwd: string, args: ReadonlyArray<string>, input?: string, env: NodeJS.ProcessEnv = {}) =>
  execFileSync("git", args, { cwd, input, encoding: "utf8", env: { ...process.env, ...env } }).trim()

describe("objects written straight into the object store", () => {
  it("are the objects git itself writes, name for name, and the repository checks clean", () => {
    const repo = mkdtempSync(join(tmpdir(), "spool-objects-"))
    git(repo, ["init", "-q"])
    const store = looseObjects(git(repo, ["rev-parse", "--path-format=absolute", "--git-path", "objects"]))
    const history = '{"run":"r","iteration":1}\n\n  trailing spaces  \n'
    writeFileSync(join(repo, "history.jsonl"), history)
    const blob = store.blob(Buffer.from(history))
    expect(blob).toBe(git(repo, ["hash-object", "history.jsonl"]))
    const state = store.blob(Buffer.from("{}"))
    const tree = store.tree([{ name: "state.json", blob: state }, { name: "history.jsonl", blob }])
    expect(tree).toBe(git(repo, ["mktree"], `100644 blob ${state}\tstate.json\n100644 blob ${blob}\thistory.jsonl\n`))
    expect(store.tree([])).toBe(git(repo, ["mktree"], ""))
    const when = "1795000000 +0000"
    const identity = { GIT_AUTHOR_NAME: "spool", GIT_AUTHOR_EMAIL: "spool@localhost", GIT_COMMITTER_NAME: "spool", GIT_COMMITTER_EMAIL: "spool@localhost", GIT_AUTHOR_DATE: when, GIT_COMMITTER_DATE: when }
    const first = store.commit({ tree, parent: null, message: "spool: the loop's state", when })
    expect(first).toBe(git(repo, ["commit-tree", tree, "-m", "spool: the loop's state"], undefined, identity))
    const second = store.commit({ tree, parent: first, message: '{"holder":"h"}', when })
    expect(second).toBe(git(repo, ["commit-tree", tree, "-p", first, "-m", '{"holder":"h"}'], undefined, identity))
    // Written twice, an object stays as it was.
    expect(store.blob(Buffer.from(history))).toBe(blob)
    expect(git(repo, ["cat-file", "-p", `${second}:history.jsonl`]) + "\n").toBe(history.trimEnd() + "\n")
    git(repo, ["update-ref", "refs/spool/state/x", second])
    expect(() => git(repo, ["fsck", "--strict", "--no-dangling"])).not.toThrow()
  })
})
