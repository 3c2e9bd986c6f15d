import { describe, expect, it } from "@effect/vitest"
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { agentScript, git, makeWorkspace, spool } from "./support.js"

// The loop on a repository as people have it: uncommitted work of their own beside the loop's,
// and an agent that learns from the loop why a claim was not taken.

const CHANGE = "001-01_greeting-cli"

const run = (root: string, agent: string, extra: ReadonlyArray<string> = []) =>
  spool(["ralph", "x", "--change", "001-01", "--harness", "command", "--harness-command", agent, "--no-interactive", ...extra], {
    cwd: root
  })

const filesOf = (root: string, rev: string) =>
  git(root, "show", "--name-only", "--no-renames", "--format=", rev).split("\n").filter(Boolean).sort()

const history = async (root: string) =>
  JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout).history as ReadonlyArray<{
    readonly run: string
    readonly git: { readonly files: ReadonlyArray<string> } | null
    readonly commit: string | null
    readonly warnings: ReadonlyArray<string>
  }>

describe("commits hold exactly the iteration's work", () => {
  it("leaves the owner's edited and untracked files out, says so once, and warns when the agent edits one of them", async () => {
    const root = makeWorkspace()
    appendFileSync(join(root, "README.md"), "\nThe owner's unfinished paragraph\n")
    writeFileSync(join(root, "private-notes.txt"), "API_KEY=kept-out-of-commits\n")
    const agent = agentScript(
      `import { appendFileSync, writeFileSync } from "node:fs"\n` +
        `if (process.env.SPOOL_ITERATION === "1") { writeFileSync("hello.txt", "hello\\n"); console.log("wrote hello.txt") }\n` +
        `else { appendFileSync("README.md", "Run it with node src/hello.js.\\n"); console.log("Documented it. <promise>COMPLETE</promise>") }\n`
    )
    const result = await run(root, agent)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr.split("the work tree holds").length - 1).toBe(1)
    expect(result.stderr).toContain(
      "the work tree holds 2 uncommitted changes outside .spool/ (README.md, private-notes.txt): spool commits only what each iteration changes and leaves them out"
    )
    expect(result.stdout).toMatch(/--- iteration 1: exit 0 \| .* \| 1 file changed \| commit /)

    const [first, second] = await history(root)
    // Iteration 1 wrote one file: its commit holds that file alone, as its record says.
    expect(filesOf(root, first!.commit!)).toEqual(["hello.txt"])
    expect(first!.git!.files).toEqual(["hello.txt"])
    expect(first!.warnings).toEqual([])
    // Iteration 2 edited the README the owner had edited too: committed whole, with a warning naming it.
    expect(filesOf(root, second!.commit!)).toEqual(["README.md"])
    expect(second!.git!.files).toEqual(["README.md"])
    expect(second!.warnings.join("\n")).toContain("committed README.md with iteration 2")
    expect(result.stderr).toContain("committed README.md with iteration 2")
    expect(git(root, "show", `${second!.commit}:README.md`)).toContain("The owner's unfinished paragraph")
    // The untracked file was never committed and is still there; nothing else is left uncommitted.
    expect(git(root, "status", "--porcelain")).toBe("?? private-notes.txt")
    expect(git(root, "log", "--all", "--format=%H", "--", "private-notes.txt")).toBe("")
    expect(readFileSync(join(root, "private-notes.txt"), "utf8")).toBe("API_KEY=kept-out-of-commits\n")
  })
})

describe("the agent hears why its claim was not taken", () => {
  it("finds in iteration 2's prompt that its promise was not accepted, why, and how to claim, and then claims", async () => {
    const root = makeWorkspace()
    const prompts = mkdtempSync(join(tmpdir(), "spool-prompts-"))
    const agent = agentScript(
      `import { readFileSync, writeFileSync } from "node:fs"\n` +
        `const prompt = readFileSync(0, "utf8")\n` +
        `writeFileSync(${JSON.stringify(prompts)} + "/" + process.env.SPOOL_ITERATION + ".txt", prompt)\n` +
        `if (!prompt.includes("alone on its own line") || !prompt.includes("was not accepted")) console.log("done <promise>COMPLETE</promise>")\n` +
        `else console.log("Every task is done.\\n<promise>COMPLETE</promise>")\n`
    )
    const result = await run(root, agent, ["--max-iterations", "3"])
    expect(result.stdout).toMatch(/--- iteration 1: exit 0 \| .* \| promise ignored: /)
    expect(result.code, result.stdout).toBe(0)
    expect(result.stdout).toContain("complete: the promise was accepted at iteration 2")
    const second = readFileSync(join(prompts, "2.txt"), "utf8")
    const reason = /promise ignored: ([^|]+) \|/.exec(result.stdout)![1]!.trim()
    expect(second).toContain(`In iteration 1 your completion promise was not accepted: "done <promise>COMPLETE</promise>" (${reason}).`)
    expect(second).toContain("print <promise>COMPLETE</promise> alone on its own line")
  })
})

describe("small truths", () => {
  it("passes --model and --allow-all to a command agent as SPOOL_MODEL and SPOOL_ALLOW_ALL", async () => {
    const root = makeWorkspace()
    const out = join(mkdtempSync(join(tmpdir(), "spool-env-")), "env.json")
    const agent = agentScript(
      `import { writeFileSync } from "node:fs"\n` +
        `writeFileSync(${JSON.stringify(out)}, JSON.stringify({ model: process.env.SPOOL_MODEL ?? null, allowAll: process.env.SPOOL_ALLOW_ALL ?? null }))\n` +
        `console.log("Done.\\n<promise>COMPLETE</promise>")\n`
    )
    expect((await run(root, agent, ["--model", "acme/coder-2", "--allow-all"])).code).toBe(0)
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({ model: "acme/coder-2", allowAll: "1" })
    expect((await run(root, agent)).code).toBe(0)
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({ model: null, allowAll: null })
  })

  it("shows in --status which run each listed iteration belongs to", async () => {
    const root = makeWorkspace()
    const agent = agentScript(`console.log("still working")\n`)
    expect((await run(root, agent, ["--max-iterations", "2"])).code).toBe(3)
    expect((await run(root, agent, ["--max-iterations", "1"])).code).toBe(3)
    const runs = [...new Set((await history(root)).map((r) => r.run))]
    expect(runs.length).toBe(2)
    const status = (await spool(["ralph", "--status", "--change", CHANGE], { cwd: root })).stdout
    const lines = status.split("\n")
    const first = lines.findIndex((line) => line.trim() === `run ${runs[0]}`)
    const latest = lines.findIndex((line) => line.trim() === `run ${runs[1]} (the latest)`)
    expect(first, status).toBeGreaterThan(0)
    expect(latest - first).toBe(3)
  })
})
