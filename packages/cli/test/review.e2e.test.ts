import { describe, expect, it } from "@effect/vitest"
import { byTurn, CLAUDE_BIN, claudeEnv, type Conversation, Reply, startFakeAnthropicServer } from "@spool/testkit/fakeAnthropicServer"
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { agentScript, git, makeWorkspace, spool, stateDir } from "./support.js"

// Reviewers end to end: the built `spool`, a scripted agent, scripted reviewers (the command harness).

const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]
const tmpFile = (name: string) => join(tmpdir(), `spool-${name}-${process.pid}-${Math.random().toString(36).slice(2)}`)
const FINDING = "- `src/app.ts` does not handle an empty name"

/** Writes src/app.ts (handling an empty name once a prompt carries the finding) and claims completion; keeps each prompt. */
const agent = (prompts: string) =>
  agentScript(`
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
const prompt = readFileSync(0, "utf8")
appendFileSync(${JSON.stringify(prompts)}, prompt + "\\n=== end of prompt ===\\n")
mkdirSync("src", { recursive: true })
const fixed = prompt.includes("does not handle an empty name")
writeFileSync("src/app.ts", fixed ? "export const greet = (name) => name === '' ? 'hi' : 'hi ' + name\\n" : "export const greet = (name) => 'hi ' + name\\n")
console.log("Done: greet is written. <promise>COMPLETE</promise>")
`)

/** A reviewer that plays its turns in order (the last one again after that), keeping each prompt and where it ran. */
const reviewer = (turns: ReadonlyArray<string>, seen: string) =>
  `command:${agentScript(`
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { execFileSync } from "node:child_process"
const prompt = readFileSync(0, "utf8")
const counter = ${JSON.stringify(`${seen}.count`)}
const turn = existsSync(counter) ? Number(readFileSync(counter, "utf8")) : 0
writeFileSync(counter, String(turn + 1))
appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ cwd: process.cwd(), prompt }) + "\\n")
const turns = ${JSON.stringify(turns)}
const play = turns[Math.min(turn, turns.length - 1)]
${"eval(play)"}
`)}`

const say = (text: string) => `console.log(${JSON.stringify(text)})`

const statusJson = async (root: string) => {
  const result = await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

describe("--review", () => {
  it("a reviewer asks for changes once, then approves: the finding reaches the next prompt, the change completes an iteration later, the records show both reviews", async () => {
    const root = makeWorkspace()
    const prompts = tmpFile("prompts")
    const seen = tmpFile("reviews")
    const review = reviewer([say(`I read the diff.\n<verdict>changes</verdict>\n${FINDING}`), say("Every task is done.\n<verdict>approve</verdict>")], seen)
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent(prompts)), "--review", review, "--verify", "test -s src/app.ts"], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`changes asked: ${FINDING}`)
    expect(result.stdout).toContain("complete: the promise was accepted at iteration 2 and approved by its review")
    const [first, second] = readFileSync(prompts, "utf8").split("=== end of prompt ===")
    expect(first).not.toContain("Review findings")
    expect(second).toContain(`## Review findings\n\n### From ${review} (iteration 1)\n\n${FINDING}`)
    const reviews = readFileSync(seen, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { cwd: string; prompt: string })
    expect(reviews).toHaveLength(2)
    // Each reviewer ran in a work tree of its own, gone since, with the change, the diff and the checks in its prompt.
    for (const { cwd } of reviews) {
      expect(cwd).not.toBe(root)
      expect(existsSync(cwd)).toBe(false)
    }
    expect(reviews[0]!.prompt).toContain("# Review of change `001-01_greeting-cli`")
    expect(reviews[0]!.prompt).toContain("+export const greet = (name) => 'hi ' + name")
    expect(reviews[0]!.prompt).toMatch(/## Checks passed\n\n- `test -s src\/app.ts`: exit 0/)
    expect(reviews[0]!.prompt).toContain("## The agent's closing message\n\nDone: greet is written.")
    expect(reviews[1]!.prompt).toContain("name === '' ? 'hi'")
    const history = (await statusJson(root)).history
    expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["changes", "complete"])
    expect(history.map((r: { reviews: Array<{ reviewer: string; verdict: string; findings: string | null }> }) =>
      r.reviews.map((v) => [v.reviewer, v.verdict, v.findings]))).toEqual([[[review, "changes", FINDING]], [[review, "approve", null]]])
    // --status in words: the reviews apart (the scripted reviewer reports no usage), each under its iteration.
    const status = await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })
    expect(status.stdout).toMatch(/^reviews: {3}2 \(1 approved\), cost unknown$/m)
    expect(status.stdout).toMatch(/^ {2}1 .* declined .* changes\n {7}review by command:.*: changes asked: - `src\/app.ts` does not handle an empty name\n {2}2 .* found .* complete\n {7}review by command:.*: approved$/m)
    // Each iteration's log holds its review: the reviewer's prompt and what it said, under a header of its own.
    const logs = join(stateDir(root, "001-01_greeting-cli"), "logs")
    const log = readFileSync(join(logs, readdirSync(logs).sort()[0]!), "utf8")
    expect(log).toContain(`\n=== review by ${review} ===\n# Review of change \`001-01_greeting-cli\``)
    expect(log).toMatch(/=== output ===\n(?:.|\n)*<verdict>changes<\/verdict>/)
    expect(git(root, "status", "--porcelain")).toBe("")
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1)
  })

  it("a verdict in a fenced example or only echoing the instructions does not approve; a reviewer that exits 1 or hangs past --inactivity-timeout is a rejection; --max-reviews rejections end the run as review-rejected (exit 6)", async () => {
    const root = makeWorkspace()
    const seen = tmpFile("reviews")
    const echo = `const lines = prompt.split("\\n"); const at = lines.findIndex((l) => l.includes("<verdict>approve</verdict>")); console.log(lines.slice(at - 1, at + 3).join("\\n"))`
    const review = reviewer([
      say("Here is the format to use:\n```\n<verdict>approve</verdict>\n```"),
      echo,
      "console.error('cannot read the repository'); process.exit(1)",
      "setTimeout(() => {}, 120000)"
    ], seen)
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent(tmpFile("prompts"))), "--review", review, "--max-reviews", "4", "--inactivity-timeout", "3s", "--max-iterations", "9"], { cwd: root })
    expect(result.code, result.stderr).toBe(6)
    expect(result.stdout).toContain("stopped: the review turned the claim down 4 times (--max-reviews 4)")
    const status = await statusJson(root)
    expect(status.status).toBe("review-rejected")
    const reviews = status.history.map((r: { reviews: Array<{ verdict: string; findings: string }> }) => r.reviews[0]!)
    expect(reviews.map((v: { verdict: string }) => v.verdict)).toEqual(["none", "none", "failed", "failed"])
    expect(reviews[0].findings).toMatch(/did not stand: .*\(.*(example|code block|format).*\)/)
    expect(reviews[1].findings).toMatch(/did not stand: .*echo of the prompt/)
    expect(reviews[2].findings).toBe("it exited with code 1")
    expect(reviews[3].findings).toBe("it was silent for 3.0s (--inactivity-timeout)")
  })

  it("what a reviewer writes (it deletes a file, edits another, commits) leaves the loop's work tree and branch as they were", async () => {
    const root = makeWorkspace()
    const seen = tmpFile("reviews")
    // It runs in its own work tree: it deletes a file, edits another, and commits.
    const vandal = [
      "rmSync('README.md', { force: true })",
      "writeFileSync('src/app.ts', 'hacked\\n')",
      "execFileSync('git', ['-c', 'user.name=r', '-c', 'user.email=r@example.invalid', 'commit', '-qam', 'reviewer was here'])",
      "console.log('All done.\\n<verdict>approve</verdict>')"
    ].join("; ")
    writeFileSync(join(root, "README.md"), "# the project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "readme")
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent(tmpFile("prompts"))), "--review", reviewer([vandal], seen)], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe("# the project\n")
    expect(readFileSync(join(root, "src/app.ts"), "utf8")).toContain("export const greet")
    expect(git(root, "log", "--format=%s", "-3")).not.toContain("reviewer was here")
    expect(git(root, "status", "--porcelain")).toBe("")
    expect(git(root, "branch", "--format=%(refname:short)")).toBe("main")
    expect(git(root, "worktree", "list").split("\n")).toHaveLength(1)
  })

  it("the real claude reviews, against its fake model server: its writes stay in its own work tree, its findings reach the agent, its approval completes the change, its spend is kept apart", async () => {
    const root = makeWorkspace()
    const prompts = tmpFile("prompts")
    const seen: Array<Conversation> = []
    let runs = 0
    const server = await startFakeAnthropicServer((conversation) => {
      if (conversation.turn === 0) {
        runs++
        seen.push(conversation)
      }
      return runs === 1
        // The first review writes in its work tree, then asks for changes; the second approves.
        ? byTurn(Reply.write("src/app.ts", "reviewer's scribble\n"), Reply.text("I read the diff.\n<verdict>changes</verdict>\n", FINDING, "\n"))(conversation)
        : Reply.text("The empty name is handled now.\n\n<verdict>approve</verdict>\n")
    })
    const home = `${root}-claude`
    try {
      const env = { ...claudeEnv({ baseURL: server.baseURL, root: home }), SPOOL_CLAUDE_BIN: CLAUDE_BIN }
      const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent(prompts)), "--review", "claude:claude-test-model", "--allow-all"], { cwd: root, env })
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(0)
      expect(seen).toHaveLength(2)
      // claude worked in a throwaway tree of the work, with the review prompt.
      expect(seen[0]!.cwd).not.toBe(root)
      expect(seen[0]!.prompt).toContain("# Review of change `001-01_greeting-cli`")
      expect(seen[0]!.prompt).toContain("+export const greet = (name) => 'hi ' + name")
      expect(readFileSync(join(root, "src/app.ts"), "utf8")).toContain("name === ''")
      expect(git(root, "status", "--porcelain")).toBe("")
      const [, second] = readFileSync(prompts, "utf8").split("=== end of prompt ===")
      expect(second).toContain(`### From claude:claude-test-model (iteration 1)\n\n${FINDING}`)
      const status = await statusJson(root)
      expect(status.history.map((r: { reviews: Array<{ reviewer: string; verdict: string }> }) => r.reviews.map((v) => [v.reviewer, v.verdict]))).toEqual([
        [["claude:claude-test-model", "changes"]],
        [["claude:claude-test-model", "approve"]]
      ])
      // claude reports its tokens: the reviewers' spend is kept apart from the agent's (the command agent reports none).
      expect(status.reviewUsage.tokens).toBeGreaterThan(0)
      expect(status.usage).toBeNull()
    } finally {
      await server.close()
      rmSync(home, { recursive: true, force: true })
    }
  })

  it("the reviewers' spend counts toward the caps: --max-tokens reached by a review stops the loop (exit 4)", async () => {
    const root = makeWorkspace()
    // claude is the agent (two requests, 240 tokens) and the reviewer (120 more): the cap of 300 falls in the review.
    const server = await startFakeAnthropicServer((conversation) =>
      conversation.prompt.includes("# Review of change")
        ? Reply.text("I read the diff.\n<verdict>changes</verdict>\n", FINDING, "\n")
        : byTurn(Reply.write("src/app.ts", "export const greet = (name) => 'hi ' + name\n"), Reply.text("greet is written.\n\n<promise>COMPLETE</promise>\n"))(conversation)
    )
    const home = `${root}-claude`
    try {
      const env = { ...claudeEnv({ baseURL: server.baseURL, root: home }), SPOOL_CLAUDE_BIN: CLAUDE_BIN }
      const result = await spool(
        ["ralph", "x", "--change", "001-01", "--harness", "claude", "--model", "claude-test-model", "--allow-all", "--no-interactive", "--review", "claude:claude-test-model", "--max-tokens", "300"],
        { cwd: root, env }
      )
      expect(result.code, `${result.stderr}${result.stdout}`).toBe(4)
      expect(result.stdout).toContain("--max-tokens")
      const status = await statusJson(root)
      expect(status.status).toBe("stopped")
      expect(status.stopReason).toBe("max-tokens")
      expect(status.history).toHaveLength(1)
      expect(status.history[0].reviews).toHaveLength(1)
      expect(status.reviewUsage.tokens).toBeGreaterThan(0)
      expect(status.guards.tokens).toBe(status.usage.tokens + status.reviewUsage.tokens)
      expect(status.guards.tokens).toBeGreaterThan(300)
    } finally {
      await server.close()
      rmSync(home, { recursive: true, force: true })
    }
  })
})
