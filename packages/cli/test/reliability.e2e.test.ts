import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { addChange, agentScript, alive, git, makeWorkspace, spool, startSpool as start, stateDir } from "./support.js"

const change = "001-01_greeting-cli"
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]

/** An agent that records its pid and its child's, starts a long `sleep`, and idles until killed. */
const idleAgent = (pidsFile: string, extra = "") =>
  agentScript(`
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
const child = spawn("sleep", ["300"], { stdio: "ignore" })
writeFileSync(${JSON.stringify(pidsFile)}, JSON.stringify([process.pid, child.pid]))
${extra}
console.log("agent idle")
setInterval(() => {}, 1000)
`)

const pidsIn = (file: string): Array<number> => JSON.parse(readFileSync(file, "utf8"))
const tmpFile = (name: string) => join(tmpdir(), `spool-${name}-${process.pid}-${Math.random().toString(36).slice(2)}`)
const statusJson = async (root: string) => {
  const result = await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

describe("one loop per change", () => {
  it("refuses a second loop on the same change, while status, context and other changes keep working", async () => {
    const root = makeWorkspace()
    addChange(root, "001-02_second")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "second change")
    const release = tmpFile("release")
    const waiting = agentScript(`
import { existsSync } from "node:fs"
console.log("first loop working")
while (!existsSync(${JSON.stringify(release)})) await new Promise((r) => setTimeout(r, 20))
console.log("<promise>COMPLETE</promise>")`)
    const first = start(["ralph", "x", "--change", "001-01", ...harness(waiting)], root)
    await first.waitFor("first loop working")

    const second = await spool(["ralph", "x", "--change", "001-01", ...harness("node -e 0")], { cwd: root })
    expect(second.code).toBe(73)
    expect(second.stderr).toMatch(new RegExp(`^spool: a loop is already running on ${change} \\(pid ${first.child.pid} on ${hostname()}, since .*\\); see spool ralph --status --change ${change}`))

    expect(await statusJson(root)).toMatchObject({ status: "running", abandoned: false, iteration: 1 })
    expect((await spool(["ralph", "--add-context", "hint", "--change", "001-01"], { cwd: root })).code).toBe(0)
    expect((await spool(["ralph", "--clear-context", "--change", "001-01"], { cwd: root })).code).toBe(0)

    // Another change runs beside it in a worktree of its own (in the same work tree it is refused).
    const other = await spool(["ralph", "x", "--change", "001-02", "--worktree", ...harness(agentScript("console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(other.code, other.stderr).toBe(0)

    writeFileSync(release, "")
    expect((await first.done).code).toBe(0)
    expect(existsSync(join(stateDir(root, change), "lock"))).toBe(false)
  })

  it("takes over the lock of a loop that died, with a warning", async () => {
    const root = makeWorkspace()
    const dead = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" })
    const deadPid = Number(dead.stdout.trim())
    await spool(["ralph", "--add-context", "make the state directory", "--change", "001-01"], { cwd: root })
    writeFileSync(join(stateDir(root, change), "lock"), JSON.stringify({ pid: deadPid, host: hostname(), startedAt: "2026-11-21T23:00:00.000Z" }))
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agentScript("console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain(`warning: took over the lock of a loop that is no longer running (pid ${deadPid}, started 2026-11-21T23:00:00.000Z)`)
  })
})

describe("a loop killed with kill -9", () => {
  it("is shown abandoned, not running, by --status, its line and its JSON; --resume runs it again from the iteration cut short", async () => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    const loop = start(["ralph", "x", "--change", "001-01", ...harness(idleAgent(pids))], root)
    await loop.waitFor("agent idle")
    const spoolPid = loop.child.pid!
    loop.child.kill("SIGKILL")
    await loop.done
    for (const pid of pidsIn(pids)) process.kill(pid, "SIGKILL")

    expect(await statusJson(root)).toMatchObject({ status: "running", abandoned: true, iteration: 1 })
    const text = await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })
    expect(text.stdout).toContain(
      `status:    abandoned (its state says running, but no process runs it: pid ${spoolPid} was killed, or its machine stopped); ` +
        `go on with spool ralph --change ${change} --resume, or start it afresh`
    )
    addChange(root, "001-02_second")
    await spool(["ralph", "x", "--change", "001-02", "--max-iterations", "1", ...harness("node -e 0")], { cwd: root })
    const rows = (await spool(["ralph", "--status"], { cwd: root })).stdout.split("\n")
    expect(rows.find((row) => row.startsWith(change))).toMatch(new RegExp(`^${change}\\s+abandoned\\s+1 of 20`))
    expect(rows.find((row) => row.startsWith("001-02_second"))).toMatch(/^001-02_second\s+max-iterations\s/)
    // --list offers it to the next run, saying what became of the last.
    const listed = (await spool(["ralph", "--list"], { cwd: root })).stdout
    expect(listed).toMatch(new RegExp(`^${change}\\s+ready\\s+last run: running, abandoned at iteration 1/20`, "m"))

    const resumed = await spool(["ralph", "x", "--change", "001-01", "--resume", ...harness(agentScript("console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(await statusJson(root)).toMatchObject({ status: "complete", abandoned: false, iteration: 1 })
  })
})

describe("signals", () => {
  const stopWith = async (signal: NodeJS.Signals, expected: number) => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    const loop = start(["ralph", "x", "--change", "001-01", ...harness(idleAgent(pids))], root)
    await loop.waitFor("agent idle")
    loop.child.kill(signal)
    const { code } = await loop.done
    expect(code).toBe(expected)
    for (const pid of pidsIn(pids)) expect(await alive(pid), `process ${pid} survived`).toBe(false)
    const status = await statusJson(root)
    expect(status.status).toBe("interrupted")
    expect(status.history.at(-1)).toMatchObject({ iteration: 1, outcome: "interrupted" })
    expect(existsSync(join(stateDir(root, change), "lock"))).toBe(false)
  }

  it("Ctrl-C stops the agent and everything it started, records the iteration as interrupted, exits 130", () => stopWith("SIGINT", 130))

  it("SIGTERM does the same and exits 143", () => stopWith("SIGTERM", 143))

  it("Ctrl-C also stops what the agent started in a process group of its own (a detached command)", async () => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    const detaching = agentScript(`
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
const child = spawn("sleep", ["300"], { stdio: "ignore", detached: true })
writeFileSync(${JSON.stringify(pids)}, JSON.stringify([process.pid, child.pid]))
console.log("agent idle")
setInterval(() => {}, 1000)
`)
    const loop = start(["ralph", "x", "--change", "001-01", ...harness(detaching)], root)
    await loop.waitFor("agent idle")
    loop.child.kill("SIGINT")
    expect((await loop.done).code).toBe(130)
    for (const pid of pidsIn(pids)) expect(await alive(pid), `process ${pid} survived`).toBe(false)
  })

  it("a closed terminal (SIGHUP) does the same and exits 129", () => stopWith("SIGHUP", 129))

  it("output nobody reads any more (a pipe into head) does the same and exits 141", async () => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    const chatty = idleAgent(pids, `setInterval(() => console.log("more output"), 20)`)
    const loop = start(["ralph", "x", "--change", "001-01", ...harness(chatty)], root)
    await loop.waitFor("agent idle")
    loop.child.stdout.destroy()
    const { code } = await loop.done
    expect(code).toBe(141)
    for (const pid of pidsIn(pids)) expect(await alive(pid), `process ${pid} survived`).toBe(false)
    expect((await statusJson(root)).history.at(-1)).toMatchObject({ iteration: 1, outcome: "interrupted" })
    expect(existsSync(join(stateDir(root, change), "lock"))).toBe(false)
  })

  it("a second Ctrl-C stops at once, even when the agent ignores SIGTERM", async () => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    const stubborn = idleAgent(pids, `process.on("SIGTERM", () => console.log("agent ignores SIGTERM"))`)
    const loop = start(["ralph", "x", "--change", "001-01", ...harness(stubborn)], root)
    await loop.waitFor("agent idle")
    const began = Date.now()
    loop.child.kill("SIGINT")
    await loop.waitFor("again to stop at once")
    loop.child.kill("SIGINT")
    const { code } = await loop.done
    expect(code).toBe(130)
    // The grace period is 5 s: stopping well before it ends is what "at once" means here.
    expect(Date.now() - began).toBeLessThan(4000)
    for (const pid of pidsIn(pids)) expect(await alive(pid), `process ${pid} survived`).toBe(false)
    expect((await statusJson(root)).history.at(-1).outcome).toBe("interrupted")
  })
})

describe("an agent that hangs", () => {
  it("is stopped after --inactivity-timeout with everything it started; the iteration is recorded as timed out and the loop goes on", async () => {
    const root = makeWorkspace()
    const pids = tmpFile("pids")
    const agent = agentScript(`
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
if (process.env.SPOOL_ITERATION === "1") {
  const child = spawn("sleep", ["300"], { stdio: "ignore" })
  writeFileSync(${JSON.stringify(pids)}, JSON.stringify([process.pid, child.pid]))
  console.log("hanging now")
  setInterval(() => {}, 1000)
} else {
  console.log("<promise>COMPLETE</promise>")
}`)
    const result = await spool(["ralph", "x", "--change", "001-01", "--inactivity-timeout", "1s", ...harness(agent)], { cwd: root })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain("warning: the harness printed nothing for 1s and was stopped")
    for (const pid of pidsIn(pids)) expect(await alive(pid), `process ${pid} survived`).toBe(false)
    const { history } = await statusJson(root)
    expect(history.map((r: { outcome: string }) => r.outcome)).toEqual(["timeout", "complete"])
    expect(readFileSync(join(stateDir(root, change), "errors.md"), "utf8")).toContain("- exit: timed out")
  })
})

describe("hostile output", () => {
  /** Runs spool to its end while sampling its peak resident memory (VmHWM) from /proc. */
  const runMeasured = async (args: ReadonlyArray<string>, cwd: string) => {
    const loop = start(args, cwd)
    let peakKiB = 0
    const sample = () => {
      try {
        const status = readFileSync(`/proc/${loop.child.pid}/status`, "utf8")
        peakKiB = Math.max(peakKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0))
      } catch {
        // The process has just exited.
      }
    }
    const timer = setInterval(sample, 20)
    const { code } = await loop.done
    clearInterval(timer)
    return { code, peakMiB: peakKiB / 1024, output: loop.output() }
  }

  it("survives 256 MiB of non-UTF-8 output without a newline, in bounded memory, and still finds the promise", async () => {
    const root = makeWorkspace()
    const agent = agentScript(`
const chunk = Buffer.alloc(1024 * 1024)
for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 131 + 7) % 256 === 10 ? 0xff : (i * 131 + 7) % 256
const write = (buf) => new Promise((resolve) => (process.stdout.write(buf) ? resolve() : process.stdout.once("drain", resolve)))
for (let i = 0; i < 256; i++) await write(chunk)
await write("\\n<promise>COMP")
await write("LETE</promise>\\n")`)
    const { code, peakMiB, output } = await runMeasured(["ralph", "x", "--change", "001-01", "--no-stream", "--no-commit", "--max-iterations", "1", ...harness(agent)], root)
    expect(code, output).toBe(0)
    expect(peakMiB).toBeGreaterThan(0)
    // Bounded: well under the 256 MiB that went through. A line that never ends is judged as text,
    // so these bytes are all decoded (into replacement characters), unlike ordinary output.
    expect(peakMiB).toBeLessThan(200)
    const logs = join(stateDir(root, change), "logs")
    const [log] = readdirSync(logs)
    expect(readFileSync(join(logs, log!)).length).toBeGreaterThan(256 * 1024 * 1024)
  })

  it("streams 64 MiB live to the terminal in bounded memory", async () => {
    const root = makeWorkspace()
    const agent = agentScript(`
const line = "x".repeat(1023) + "\\n"
const block = line.repeat(1024)
const write = (s) => new Promise((resolve) => (process.stdout.write(s) ? resolve() : process.stdout.once("drain", resolve)))
for (let i = 0; i < 64; i++) await write(block)
await write("<promise>COMPLETE</promise>\\n")`)
    const { code, peakMiB, output } = await runMeasured(["ralph", "x", "--change", "001-01", "--no-commit", "--max-iterations", "1", ...harness(agent)], root)
    expect(code).toBe(0)
    expect(output.length).toBeGreaterThan(64 * 1024 * 1024)
    expect(peakMiB).toBeLessThan(150)
  })
})

describe("crashes", () => {
  it("leaves state the next run can read after kill -9 at random moments", async () => {
    const root = makeWorkspace()
    const agent = agentScript(`console.log("iteration " + process.env.SPOOL_ITERATION + " " + "y".repeat(2000))`)
    // A fixed seed keeps the moments reproducible.
    let seed = 20261122
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    let kills = 0
    for (let round = 0; round < 12; round++) {
      // The agent changes nothing: without --stall-iterations 0 the stall breaker would end the loop before the kill.
      const loop = start(["ralph", "x", "--change", "001-01", "--no-commit", "--max-iterations", "100000", "--stall-iterations", "0", ...harness(agent)], root)
      await loop.waitFor("=== spool ralph: iteration 1/")
      await new Promise((r) => setTimeout(r, 50 + random() * 700))
      loop.child.kill("SIGKILL")
      await loop.done
      kills++
      const status = await statusJson(root)
      expect(["running", "failed", "interrupted", "complete", "max-iterations"]).toContain(status.status)
      // A state the kill left running has no process any more, and --status says so.
      expect(status.abandoned).toBe(status.status === "running")
      expect(status.iteration).toBeGreaterThan(0)
    }
    const lines = readFileSync(join(stateDir(root, change), "history.jsonl"), "utf8").split("\n").filter((l) => l !== "")
    const broken = lines.filter((line) => {
      try {
        JSON.parse(line)
        return false
      } catch {
        return true
      }
    })
    expect(broken.length).toBeLessThanOrEqual(kills)
    expect(lines.length - broken.length).toBeGreaterThan(0)
    const last = await spool(["ralph", "x", "--change", "001-01", "--no-commit", ...harness(agentScript("console.log('<promise>COMPLETE</promise>')"))], { cwd: root })
    expect(last.code, last.stderr).toBe(0)
    expect(last.stderr).toContain("took over the lock of a loop that is no longer running")
  })

  it("stops with a clear error when the disk is full, leaving no partial files", async () => {
    const root = makeWorkspace()
    await spool(["ralph", "--add-context", "make the state directory", "--change", "001-01"], { cwd: root })
    symlinkSync("/dev/full", join(stateDir(root, change), "history.jsonl"))
    const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agentScript("console.log('working')"))], { cwd: root })
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split("\n").at(-1)).toMatch(/^spool: cannot write .*history\.jsonl: no space left on device \(check permissions and free disk space\)$/)
    expect(readdirSync(stateDir(root, change)).filter((f) => f.endsWith(".tmp"))).toEqual([])
    expect((await statusJson(root)).status).toBe("failed")
  })
})
