import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { baseEnv, spoolBin, stateDir } from "./support.js"

// `script` gives spool a real terminal on stdin, as a person at a keyboard has.
const inTerminal = (
  cwd: string,
  args: ReadonlyArray<string>,
  keys: (output: string) => string | null,
  env: Record<string, string> = {}
) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const quoted = [process.execPath, spoolBin, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")
    const child = spawn("script", ["-qfec", quoted, "/dev/null"], { cwd, env: baseEnv(env), stdio: ["pipe", "pipe", "pipe"] })
    let output = ""
    let sent = false
    const onData = (data: Buffer) => {
      output += data.toString()
      const toSend = sent ? null : keys(output)
      if (toSend !== null) {
        sent = true
        child.stdin.write(toSend)
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("close", (code) => {
      child.stdin.destroy()
      resolve({ code, output })
    })
  })

const workspace = (...ids: Array<string>) => {
  const root = mkdtempSync(join(tmpdir(), "spool-tty-"))
  for (const id of ids) {
    mkdirSync(join(root, ".spool", "changes", id), { recursive: true })
    writeFileSync(join(root, ".spool", "changes", id, "proposal.md"), `# ${id}\n`)
  }
  return root
}

const run = ["go", "--harness", "command", "--harness-command", "node -e 0", "--max-iterations", "1", "--no-commit"]
const DOWN = "\x1b[B"

describe("choosing a change on a terminal", () => {
  it("asks which active change to work on when --change is omitted, and loops on the one picked", async () => {
    const root = workspace("001-01_a", "001-02_b", "002-01_c")
    const { code, output } = await inTerminal(root, ["ralph", ...run], (out) => (out.includes("002-01_c") ? `${DOWN}\r` : null))
    expect(output).toContain("Which change should the loop work on?")
    expect(code).toBe(3)
    expect(existsSync(join(stateDir(root, "001-02_b"), "state.json"))).toBe(true)
    expect(existsSync(stateDir(root, "001-01_a"))).toBe(false)
  })

  it("Ctrl-C at the question stops spool with exit 130, writing nothing", async () => {
    const root = workspace("001-01_a", "001-02_b")
    const { code, output } = await inTerminal(root, ["ralph", ...run], (out) => (out.includes("001-02_b") ? "\x03" : null))
    expect(output).toContain("Which change should the loop work on?")
    expect(output).not.toContain("QuitException")
    expect(code).toBe(130)
    expect(existsSync(join(root, ".spool", ".state"))).toBe(false)
  })

  it("offers only the changes of --module", async () => {
    const root = workspace("001-01_a", "002-01_b", "002-02_c")
    const { output } = await inTerminal(root, ["ralph", "--module", "002", ...run], (out) => (out.includes("002-02_c") ? "\r" : null))
    expect(output).toContain("Which change should the loop work on?")
    expect(output).not.toContain("001-01_a")
    expect(existsSync(join(stateDir(root, "002-01_b"), "state.json"))).toBe(true)
  })

  it("picks the only active change without asking", async () => {
    const root = workspace("003-01_only")
    mkdirSync(join(root, ".spool", "changes", "archive", "001-01_old"), { recursive: true })
    writeFileSync(join(root, ".spool", "changes", "archive", "001-01_old", "proposal.md"), "# old\n")
    const { code, output } = await inTerminal(root, ["ralph", ...run], () => null)
    expect(output).not.toContain("Which change")
    expect(code).toBe(3)
    expect(existsSync(join(stateDir(root, "003-01_only"), "state.json"))).toBe(true)
  })

  it("does not ask with --no-interactive, even on a terminal", async () => {
    const root = workspace("001-01_a", "001-02_b")
    const { code, output } = await inTerminal(root, ["ralph", "--no-interactive", ...run], () => null)
    expect(code).toBe(2)
    expect(output).toContain("--change is required when spool cannot ask (no terminal, --no-interactive or CI); active changes: 001-01_a, 001-02_b")
  })
})

describe("the live view on a terminal", () => {
  const agent = "node -e \"console.log('working'); console.log('<promise>COMPLETE</promise>')\""
  const loop = ["ralph", "go", "--change", "001-01_a", "--harness", "command", "--harness-command", agent, "--max-iterations", "3", "--no-commit"]

  it("shows where the loop is between the agent's lines, in colour", async () => {
    const { code, output } = await inTerminal(workspace("001-01_a"), loop, () => null, { NO_COLOR: "" })
    expect(code).toBe(0)
    expect(output).toMatch(/\[spool\] iteration 1\/3 · \d/)
    expect(output).toContain("\x1b[")
  })

  it("with NO_COLOR: the same status line, and no escape sequences", async () => {
    const { code, output } = await inTerminal(workspace("001-01_a"), loop, () => null, { NO_COLOR: "1" })
    expect(code).toBe(0)
    expect(output).toMatch(/\[spool\] iteration 1\/3 · \d/)
    expect(output).not.toContain("\x1b")
  })

  it("with TERM=dumb: plain lines only", async () => {
    const { code, output } = await inTerminal(workspace("001-01_a"), loop, () => null, { NO_COLOR: "", TERM: "dumb" })
    expect(code).toBe(0)
    expect(output).toContain("complete: the promise was accepted at iteration 1")
    expect(output).not.toContain("[spool] iteration")
    expect(output).not.toContain("\x1b")
  })
})
