import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { agentScript, alive, git, makeWorkspace, spool, startSpool, stateDir } from "./support.js"

// Verified completion end to end: the built `spool`, a scripted agent, and real shell commands as checks.

const CLAIM = "Done: greeting.txt is written. <promise>COMPLETE</promise>"
const CHECK = "test -s greeting.txt || { echo \"FAIL: $(echo greeting).txt is missing\"; exit 1; }"
const change = "001-01_greeting-cli"
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]
const tmpFile = (name: string) => join(tmpdir(), `spool-${name}-${process.pid}-${Math.random().toString(36).slice(2)}`)

const statusJson = async (root: string) => {
  const result = await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

/** Claims completion every iteration; writes greeting.txt only once a prompt has shown it what the check said. Keeps each prompt. */
const eagerAgent = (prompts: string) =>
  agentScript(`
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
const prompt = readFileSync(0, "utf8")
appendFileSync(${JSON.stringify(prompts)}, prompt + "\\n=== end of prompt ===\\n")
if (prompt.includes("FAIL: greeting.txt is missing")) writeFileSync("greeting.txt", "hello\\n")
console.log(${JSON.stringify(CLAIM)})
`)

describe("--verify", () => {
  it("rejects a claim the check fails, shows the agent why, and completes once the agent fixed it", async () => {
    const root = makeWorkspace()
    const prompts = tmpFile("prompts")
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(eagerAgent(prompts)), "--verify", CHECK, "--verify", "echo linted"], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/--- iteration 1: exit 0 \| .* \| promise rejected: verify failed: test -s greeting\.txt .* \(exit 1, [\d.]+m?s\) \| .* -> failed/)
    expect(result.stdout).toMatch(/--- iteration 2: exit 0 \| .* \| promise found, verified: test -s greeting\.txt .* [\d.]+m?s, echo linted [\d.]+m?s \| .* -> complete/)
    const [first, second] = readFileSync(prompts, "utf8").split("=== end of prompt ===")
    expect(first).not.toContain("greeting.txt is missing")
    expect(second).toContain("In iteration 1 you claimed completion, and the loop checked the claim")
    expect(second).toContain("FAIL: greeting.txt is missing")
    const history = (await statusJson(root)).history
    expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["failed", "complete"])
    expect(history[0].verify).toEqual([{ command: CHECK, exitCode: 1, signal: null, timedOut: false, durationMs: expect.any(Number), passed: false }])
    // The rejected claim is recorded as a claim set aside is: not detected, its promise not accepted, and why.
    expect(history[0].completionDetected).toBe(false)
    expect(history[0].promises).toEqual([{ accepted: false, reason: `verify failed: ${CHECK.slice(0, 79)}… (exit 1)`, text: expect.stringContaining("<promise>COMPLETE</promise>") }])
    expect(history[1].completionDetected).toBe(true)
    expect(history[1].promises.map((p: { accepted: boolean }) => p.accepted)).toEqual([true])
    const record = JSON.parse(readFileSync(join(stateDir(root, change), "history.jsonl"), "utf8").split("\n")[0]!)
    expect(record).toMatchObject({ completionDetected: false, promises: [{ accepted: false }], verify: [{ command: CHECK, passed: false }] })
    expect(history[1].verify.map((c: { command: string; passed: boolean }) => [c.command, c.passed])).toEqual([[CHECK, true], ["echo linted", true]])
    // The failure is journaled with the check's output (archived once the change completed).
    const archived = readdirSync(stateDir(root, change)).find((name) => /^errors-.*\.md$/.test(name))
    const journal = readFileSync(join(stateDir(root, change), archived ?? "errors.md"), "utf8")
    expect(journal).toContain("- check: exit 1, ")
    expect(journal).toContain("FAIL: greeting.txt is missing")
    // The agent's fix is committed by the iteration that made it.
    expect(git(root, "show", "--stat", "HEAD")).toContain("greeting.txt")
  })

  it("commits the agent's work, never what a check writes, in this iteration or the next", async () => {
    const root = makeWorkspace()
    const agent = agentScript(
      `import { writeFileSync } from "node:fs"\n` +
        `writeFileSync("work-" + process.env.SPOOL_ITERATION + ".txt", "done\\n")\n` +
        `console.log(${JSON.stringify(CLAIM)})\n`
    )
    // The check leaves a report behind, and passes only the second time.
    const check = "echo \"run $SPOOL_ITERATION\" > check-report.txt; test \"$SPOOL_ITERATION\" = 2"
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent), "--verify", check], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    const history = (await statusJson(root)).history
    expect(history.map((r: { git: { files: Array<string> } }) => r.git.files)).toEqual([["work-1.txt"], ["work-2.txt"]])
    for (const record of history) {
      expect(git(root, "show", "--name-only", "--format=", record.commit).split("\n").filter(Boolean)).toEqual([record.git.files[0]])
    }
    expect(git(root, "status", "--porcelain")).toBe("?? check-report.txt")
  })

  it("passes a check whose shell exits 0 while something it started in the background still holds its output, and stops that", async () => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    const check = `sleep 300 & echo $! > ${pids}; echo checked`
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agentScript(`console.log(${JSON.stringify(CLAIM)})`)), "--verify", check, "--verify-timeout", "2m"], { cwd: root })
    expect(result.code, result.stdout).toBe(0)
    expect(result.stdout).toMatch(/promise found, verified: sleep 300/)
    expect((await statusJson(root)).history[0].verify[0]).toMatchObject({ exitCode: 0, timedOut: false, passed: true })
    expect(await alive(Number(readFileSync(pids, "utf8").trim())), "the background sleep survived").toBe(false)
  })

  it("runs the checks where the agent works: in the loop's worktree with --worktree", async () => {
    const root = makeWorkspace()
    const result = await spool(["ralph", "x", "--change", "001-01", "--worktree", ...harness(agentScript(`console.log(${JSON.stringify(CLAIM)})`)), "--verify", "echo \"checked in $(pwd)\"; exit 3", "--max-iterations", "1"], { cwd: root })
    expect(result.code, result.stderr).toBe(3)
    expect(result.stdout).toContain("promise rejected: verify failed: echo")
    const journal = readFileSync(join(stateDir(root, change), "errors.md"), "utf8")
    expect(journal).toContain("- check: exit 3, ")
    expect(journal).toMatch(new RegExp(`checked in .*/\\.spool/\\.state/worktrees/${change}\n`))
  })

  it("stops a check that runs past --verify-timeout with every process it started, and counts it as failed", async () => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    // The check ignores SIGTERM, and so does what it started: only SIGKILL to the group stops them.
    const hung = `trap '' TERM; sleep 300 & echo $$ $! > ${pids}; echo started; wait; wait`
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agentScript(`console.log(${JSON.stringify(CLAIM)})`)), "--verify", hung, "--verify-timeout", "1s", "--max-iterations", "1"], { cwd: root })
    expect(result.code, result.stderr).toBe(3)
    expect(result.stdout).toMatch(/promise rejected: verify failed: trap .* \(timed out after [\d.]+s\)/)
    const [shell, sleeper] = readFileSync(pids, "utf8").trim().split(" ").map(Number)
    for (const pid of [shell!, sleeper!]) expect(await alive(pid), `process ${pid} survived`).toBe(false)
    const record = (await statusJson(root)).history[0]
    expect(record.outcome).toBe("failed")
    expect(record.verify[0]).toMatchObject({ timedOut: true, passed: false, exitCode: null })
    const journal = readFileSync(join(stateDir(root, change), "errors.md"), "utf8")
    expect(journal).toContain("- check: timed out after")
    expect(journal).toContain("started")
  })

  it("Ctrl-C during a check stops it and the loop: exit 130, the lock released, nothing left running", async () => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    const loop = startSpool(
      ["ralph", "x", "--change", "001-01", ...harness(agentScript(`import { writeFileSync } from "node:fs"\nwriteFileSync("done.txt", "x\\n")\nconsole.log(${JSON.stringify(CLAIM)})`)), "--verify", `sleep 300 & echo $$ $! > ${pids}; echo check running; wait`],
      root
    )
    await loop.waitFor("checking the claim")
    for (let i = 0; i < 500 && !existsSync(pids); i++) await new Promise((r) => setTimeout(r, 10))
    loop.child.kill("SIGINT")
    const { code } = await loop.done
    expect(code, loop.output()).toBe(130)
    const [shell, sleeper] = readFileSync(pids, "utf8").trim().split(" ").map(Number)
    for (const pid of [shell!, sleeper!]) expect(await alive(pid), `process ${pid} survived`).toBe(false)
    expect(existsSync(join(stateDir(root, change), "lock"))).toBe(false)
    const status = await statusJson(root)
    expect(status.status).toBe("interrupted")
    // One record of the iteration, which keeps the commit of the agent's work made before the check.
    expect(status.history.length).toBe(1)
    expect(status.history[0]).toMatchObject({ iteration: 1, outcome: "interrupted", git: { files: ["done.txt"] } })
    expect(git(root, "show", "--name-only", "--format=", status.history[0].commit)).toBe("done.txt")
  })
})

describe("the settings file (.spool/config.json)", () => {
  const settings = (root: string, ralph: Record<string, unknown>) => {
    // As a spool repository keeps it: other settings beside the loop's.
    const text = `${JSON.stringify({ tools: {}, agents: {}, defaults: { testing: { coverage: { target_percent: 100 } } }, ralph }, null, 2)}\n`
    writeFileSync(join(root, ".spool", "config.json"), text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "settings")
    return text
  }

  it("gives the loop its options, the command line wins option by option, and --status says where each came from", async () => {
    const root = makeWorkspace()
    const text = settings(root, {
      harness: "command",
      "harness-command": agentScript(`console.log(${JSON.stringify(CLAIM)})`),
      verify: ["test -e never-there", "echo unreached"],
      "max-iterations": 2,
      "no-interactive": true
    })
    const fromFile = await spool(["ralph", "x", "--change", "001-01"], { cwd: root })
    expect(fromFile.code, fromFile.stderr).toBe(3)
    expect(fromFile.stdout).toContain("=== spool ralph: iteration 2/2")
    expect(fromFile.stdout).toContain("promise rejected: verify failed: test -e never-there (exit 1,")
    expect(fromFile.stdout).not.toContain("echo unreached")
    expect((await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout).toContain(
      "settings:  .spool/config.json (harness, harness-command, verify, max-iterations, no-interactive); command line (change)"
    )

    const overridden = await spool(["ralph", "x", "--change", "001-01", "--verify", "true", "--max-iterations", "1"], { cwd: root })
    expect(overridden.code, overridden.stderr).toBe(0)
    expect(overridden.stdout).toContain("=== spool ralph: iteration 1/1")
    expect(overridden.stdout).toMatch(/promise found, verified: true [\d.]+m?s \|/)
    const status = await statusJson(root)
    expect(status.settings).toEqual({
      file: ".spool/config.json",
      fromFile: ["harness", "harness-command", "no-interactive"],
      fromCommandLine: ["change", "verify", "max-iterations"]
    })
    // The file is the repository's: spool reads it and leaves it as it was.
    expect(readFileSync(join(root, ".spool", "config.json"), "utf8")).toBe(text)
  })

  it("a settings file without a ralph section is read and left alone", async () => {
    const root = makeWorkspace()
    const text = `{\n  "tools": {},\n  "agents": {},\n  "defaults": { "testing": { "tdd": { "workflow": "red-green-refactor" } } }\n}\n`
    writeFileSync(join(root, ".spool", "config.json"), text)
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agentScript(`console.log(${JSON.stringify(CLAIM)})`))], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(join(root, ".spool", "config.json"), "utf8")).toBe(text)
    expect((await statusJson(root)).settings).toEqual({ file: null, fromFile: [], fromCommandLine: ["change", "harness", "harness-command", "no-interactive"] })
  })
})
