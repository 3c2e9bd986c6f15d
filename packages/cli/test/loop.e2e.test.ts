import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { agentScript, git, makeWorkspace, scriptedAgent, spool, spawnSpool, stateDir } from "./support.js"

const change = "001-01_greeting-cli"
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]

/** An agent that logs its prompt to `log` and behaves per iteration as `body` says (JS, with `it` and `prompt`). */
const agent = (body: string) =>
  agentScript(`
import { appendFileSync, readFileSync } from "node:fs"
const prompt = readFileSync(0, "utf8")
const it = Number(process.env.SPOOL_ITERATION)
if (process.env.PROMPT_LOG) appendFileSync(process.env.PROMPT_LOG, JSON.stringify({ it, prompt }) + "\\n")
${body}
`)

const promptsOf = (file: string): Array<{ it: number; prompt: string }> =>
  readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line))

const statusJson = async (root: string) => JSON.parse((await spool(["ralph", "--status", "--json", "--change", change], { cwd: root })).stdout)

describe("spool ralph end to end (built binary, temporary git repositories)", () => {
  it("runs the scripted agent to completion: one task per iteration, a failure, then the promise", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "Do the tasks.", "--change", "001-01", ...harness(`node ${scriptedAgent}`)], { cwd: root })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("=== spool ralph: iteration 1/20")
    expect(result.stdout).toContain("[agent] task 1.1 done")
    expect(result.stdout).toMatch(/--- iteration 2: exit 1 \|.*-> failed/)
    expect(result.stdout).toContain("complete: the promise was accepted at iteration 4")
    expect(readFileSync(join(root, "src", "hello.js"), "utf8")).toContain("greet")
    const status = await statusJson(root)
    expect(status.status).toBe("complete")
    expect(status.iteration).toBe(4)
    expect(status.history.map((r: { outcome: string }) => r.outcome)).toEqual(["continue", "failed", "continue", "complete"])
  })

  it("`spool loop` is the same command as `spool ralph`", async () => {
    const root = makeWorkspace()
    const result = await spool(["loop", "Do the tasks.", "--change", "001-01", ...harness(`node ${scriptedAgent}`)], { cwd: root })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("complete: the promise was accepted at iteration 4")
  })

  it("exits 3 when --max-iterations is reached without the promise", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "2", ...harness(agent("console.log('still working')"))], { cwd: root })
    expect(result.code).toBe(3)
    expect(result.stdout).toContain("stopped: --max-iterations (2) reached without the completion promise")
    expect(await statusJson(root)).toMatchObject({ status: "max-iterations", iteration: 2 })
  })

  it("with --fail-fast stops at the first failure and exits 1", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", "--fail-fast", ...harness(agent("process.exit(5)"))], { cwd: root })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("iteration 1 failed (the harness exited with code 5) and --fail-fast is set")
    expect(await statusJson(root)).toMatchObject({ status: "failed", iteration: 1 })
  })

  it("goes on after a failed iteration without --fail-fast", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent("if (it === 1) process.exit(9); console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(result.code).toBe(0)
    const { history } = await statusJson(root)
    expect(history.map((r: { exitCode: number }) => r.exitCode)).toEqual([9, 0])
  })

  it("honours --min-iterations after an early promise", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", "--min-iterations", "3", ...harness(agent("console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(result.code).toBe(0)
    expect(await statusJson(root)).toMatchObject({ status: "complete", iteration: 3 })
  })

  it("reads the prompt from --prompt-file", async () => {
    const root = makeWorkspace()
    const log = join(root, "..", `prompts-${Date.now()}.jsonl`)
    const file = join(root, "..", `prompt-${Date.now()}.md`)
    writeFileSync(file, "PROMPT-FROM-FILE: build the greeter\n")
    const result = await spool(["ralph", "--prompt-file", file, "--change", "001-01", ...harness(agent("console.log('<promise>COMPLETE</promise>')"))], { cwd: root, env: { PROMPT_LOG: log } })
    expect(result.code).toBe(0)
    expect(promptsOf(log)[0]!.prompt).toContain("## Your Task\n\nPROMPT-FROM-FILE: build the greeter")
  })

  it("with --no-stream shows no agent output live but still detects the promise and logs everything", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", "--no-stream", ...harness(agent("console.log('LIVE-MARKER'); console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(result.code).toBe(0)
    expect(result.stdout).not.toContain("LIVE-MARKER")
    expect(result.stdout).toContain("promise found")
    const logs = await spool(["ralph", "--status", "--json", "--change", change], { cwd: root })
    expect(JSON.parse(logs.stdout).history[0].completionDetected).toBe(true)
    const logDir = join(stateDir(root, change), "logs")
    const [logFile] = readdirSync(logDir)
    expect(readFileSync(join(logDir, logFile!), "utf8")).toContain("LIVE-MARKER")
  })

  it("reads the agent through pipes when no socket can be made for its output (a temporary directory too deep), and loses nothing", async () => {
    const root = makeWorkspace()
    const deep = join(root, "..", `tmp-${Date.now()}`, "d".repeat(60), "e".repeat(60))
    mkdirSync(deep, { recursive: true })
    const source = "console.log('ünïcödé line'); console.error('on stderr'); console.log('<promise>COMPLETE</promise>')"
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent(source))], { cwd: root, env: { TMPDIR: deep } })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain("ünïcödé line")
    const logDir = join(stateDir(root, change), "logs")
    const [logFile] = readdirSync(logDir)
    const log = readFileSync(join(logDir, logFile!), "utf8")
    expect(log).toContain("ünïcödé line\n")
    expect(log).toContain("[stderr] on stderr")
  })

  it("puts the proposal and the module in the prompt, the module inferred from the change id", async () => {
    const root = makeWorkspace()
    const log = join(root, "..", `prompts-${Date.now()}-m.jsonl`)
    await spool(["ralph", "x", "--change", "001-01", ...harness(agent("console.log('<promise>COMPLETE</promise>')"))], { cwd: root, env: { PROMPT_LOG: log } })
    const { prompt } = promptsOf(log)[0]!
    expect(prompt).toContain("# Add a greeting command")
    expect(prompt).toContain("### Module (`001`)")
    expect(prompt).toContain("# Module 001: greeting")
  })

  it("adds context from another terminal while the loop runs, and the next iteration sees it; clearing removes it", async () => {
    const root = makeWorkspace()
    const log = join(root, "..", `prompts-${Date.now()}-c.jsonl`)
    const signal = join(root, "..", `go-${Date.now()}`)
    // Iteration 1 waits until the test has added context; iteration 2 until it has cleared it.
    const wait = `const { existsSync } = await import("node:fs"); const until = (f) => new Promise((r) => { const t = setInterval(() => { if (existsSync(f)) { clearInterval(t); r() } }, 20) })`
    const command = agent(`${wait}\nconsole.log("iteration " + it + " running"); if (it === 1) await until(${JSON.stringify(`${signal}-1`)}); if (it === 2) await until(${JSON.stringify(`${signal}-2`)}); if (it === 3) console.log("<promise>COMPLETE</promise>")`)
    const child = spawnSpool(["ralph", "x", "--change", "001-01", ...harness(command)], { cwd: root, env: { PROMPT_LOG: log } })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    const waitFor = async (text: string) => {
      while (!out.includes(text)) await new Promise((r) => setTimeout(r, 20))
    }
    await waitFor("iteration 1 running")
    const added = await spool(["ralph", "--add-context", "Prefer small commits.", "--change", "001-01"], { cwd: root })
    expect(added.code).toBe(0)
    expect(added.stdout).toContain("added context for 001-01_greeting-cli")
    writeFileSync(`${signal}-1`, "")
    await waitFor("iteration 2 running")
    const cleared = await spool(["ralph", "--clear-context", "--change", "001-01"], { cwd: root })
    expect(cleared.stdout).toContain("cleared context for 001-01_greeting-cli")
    writeFileSync(`${signal}-2`, "")
    const code = await new Promise((resolve) => child.on("close", resolve))
    expect(code).toBe(0)
    const prompts = promptsOf(log)
    expect(prompts.map((p) => p.prompt.includes("## Additional Context (added by user mid-loop)\n\nPrefer small commits.\n\n---"))).toEqual([false, true, false])
  })

  it("--status prints the iteration count and recent iterations with duration, promise and exit code", async () => {
    const root = makeWorkspace()
    await spool(["ralph", "x", "--change", "001-01", ...harness(agent("if (it === 2) process.exit(3); if (it === 3) console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    const text = await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })
    expect(text.code).toBe(0)
    expect(text.stdout).toContain("status:    complete")
    expect(text.stdout).toContain("iteration: 3 of at most 20")
    expect(text.stdout).toMatch(/iter\s+started\s+duration\s+exit\s+promise\s+changed\s+commit\s+outcome/)
    expect(text.stdout).toMatch(/\n\s+2\s+\S+Z\s+\S+\s+3\s+-\s+/)
    expect(text.stdout).toMatch(/\n\s+3\s+\S+Z\s+\S+\s+0\s+found\s+/)
    const json = await statusJson(root)
    expect(Object.keys(json)).toEqual(expect.arrayContaining(["changeId", "iteration", "status", "history"]))
    expect(Object.keys(json.history[0])).toEqual(expect.arrayContaining(["run", "iteration", "startedAt", "durationMs", "exitCode", "completionDetected", "outcome", "git", "commit"]))
    // --status --json without --change lists every change with state: here the one.
    expect(JSON.parse((await spool(["ralph", "--status", "--json"], { cwd: root })).stdout).map((s: { changeId: string }) => s.changeId)).toEqual([change])
  })

  it("keeps loop state out of git: .spool/.state/ is ignored", async () => {
    const root = makeWorkspace()
    await spool(["ralph", "x", "--change", "001-01", ...harness(agent("console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    const status = spawnSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: root, encoding: "utf8" }).stdout
    expect(status).not.toContain(".spool/.state")
  })

  it("journals failed iterations in errors.md across runs, and archives it when every task is done", async () => {
    const root = makeWorkspace()
    const errors = join(stateDir(root, change), "errors.md")
    const failing = harness(agent("console.error('FAILURE-OF-RUN-' + process.env.SPOOL_ITERATION); process.exit(7)"))
    expect((await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "1", ...failing], { cwd: root })).code).toBe(3)
    expect((await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "1", ...failing], { cwd: root })).code).toBe(3)
    const journal = readFileSync(errors, "utf8")
    expect(journal.match(/<!-- spool:error-entry -->/g)).toHaveLength(2)
    expect(new Set(journal.match(/^- run: .*$/gm)).size).toBe(2)
    expect(journal).toContain("- exit: code 7")
    expect(journal).toContain("- task: 1.1")
    expect(journal).toContain("FAILURE-OF-RUN-1")

    const done = await spool(["ralph", "Do the tasks.", "--change", "001-01", ...harness(`node ${scriptedAgent}`)], { cwd: root })
    expect(done.code).toBe(0)
    expect(done.stdout).toMatch(/error journal archived to .*errors-\d{8}T\d{6}Z\.md; errors\.md is now empty/)
    expect(readFileSync(errors, "utf8")).toBe("")
    const archived = readdirSync(stateDir(root, change)).filter((f) => /^errors-.*\.md$/.test(f))
    expect(archived).toHaveLength(1)
    // Two entries from the failing runs, one from the scripted agent's failure at iteration 2.
    expect(readFileSync(join(stateDir(root, change), archived[0]!), "utf8").match(/<!-- spool:error-entry -->/g)).toHaveLength(3)
    expect((await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout).toContain("tasks:     3/3 complete")
  })

  it("never writes a secret from the environment into the log or the journal", async () => {
    const root = makeWorkspace()
    const secret = "sk-live-0123456789abcdef0123"
    const result = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "1", ...harness(agent("console.log('token is ' + process.env.MY_SERVICE_TOKEN); console.error('auth ' + process.env.MY_SERVICE_TOKEN); process.exit(1)"))], { cwd: root, env: { MY_SERVICE_TOKEN: secret } })
    expect(result.code).toBe(3)
    const dir = stateDir(root, change)
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).map((f) => join(dir, f)).filter((f) => !f.endsWith("logs"))
    const written = files.map((f) => readFileSync(f, "utf8")).join("\n")
    expect(written).toContain("token is [REDACTED]")
    expect(written).toContain("auth [REDACTED]")
    expect(written).not.toContain(secret)
  })

  it("records what each iteration changed and the commit it made, matching the repository", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "Do the tasks.", "--change", "001-01", ...harness(`node ${scriptedAgent}`)], { cwd: root })
    expect(result.code).toBe(0)
    const { history } = await statusJson(root)
    // Iteration 1 writes src/greet.js and ticks tasks.md; iteration 2 fails having changed nothing.
    expect(history[0].git).toMatchObject({ changedFiles: 2, files: [".spool/changes/001-01_greeting-cli/tasks.md", "src/greet.js"] })
    expect(history[1].git.changedFiles).toBe(0)
    expect(history[1].commit).toBeNull()
    const commits = git(root, "log", "--format=%H %s").split("\n")
    expect(commits.length).toBe(4)
    expect(history.at(-1).commit).toBe(commits[0]!.split(" ")[0])
    expect(commits[0]).toContain("spool ralph: 001-01_greeting-cli iteration 4")
    expect(git(root, "status", "--porcelain")).toBe("")
    const text = (await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout
    expect(text).toMatch(new RegExp(`\\n\\s+4\\s+\\S+Z\\s+\\S+\\s+0\\s+found\\s+2\\s+${commits[0]!.slice(0, 7)}\\s+complete`))
  })

  it("makes no commits with --no-commit but still counts the changes", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "Do the tasks.", "--change", "001-01", "--no-commit", ...harness(`node ${scriptedAgent}`)], { cwd: root })
    expect(result.code).toBe(0)
    const { history } = await statusJson(root)
    expect(history.map((r: { commit: string | null }) => r.commit)).toEqual([null, null, null, null])
    expect(history[0].git.changedFiles).toBe(2)
    expect(git(root, "log", "--format=%s").split("\n")).toEqual(["initial"])
  })

  it("runs outside a git repository with one warning and no git fields", async () => {
    const root = makeWorkspace({ git: false })
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agentScript("console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(result.code).toBe(0)
    expect(result.stderr.match(/warning: not inside a git repository/g)).toHaveLength(1)
    expect((await statusJson(root)).history[0]).toMatchObject({ git: null, commit: null })
  })

  it("warns once about a tasks.md it cannot read, and goes on without tasks", async () => {
    const root = makeWorkspace()
    writeFileSync(join(root, ".spool", "changes", change, "tasks.md"), Buffer.from([0x2d, 0x20, 0x5b, 0x00, 0x5d, 0xff]))
    const result = await spool(["ralph", "x", "--change", "001-01", "--max-iterations", "2", ...harness(agent("if (it === 2) console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(result.code).toBe(0)
    expect(result.stderr.match(/tasks\.md is not a text file/g)).toHaveLength(1)
    expect(result.stderr).toContain(join(".spool", "changes", change, "tasks.md"))
  })
})
