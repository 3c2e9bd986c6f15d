// Running the built `spool` binary, and loop state written the way spool writes it.
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { program } from "./measure.mjs"
import { spoolBin } from "./paths.mjs"

export const CHANGE = "001-01"
export const CHANGE_ID = "001-01_greeting-cli"

/** spool's environment: no color, no CI marker, plus `extra`. */
export const spoolEnv = (extra = {}) => {
  const env = { ...process.env, NO_COLOR: "1", ...extra }
  delete env.CI
  return env
}

/** A timed program running `node spool.js <args>` in `cwd`. */
export const spoolProgram = (name, args, { cwd, env = {}, codes = [0] }) =>
  program(name, process.execPath, [spoolBin, ...args], { cwd, env: spoolEnv(env), codes })

/** A `--harness-command` from argv, quoted the way spool splits it (no shell involved). */
export const harnessCommand = (...argv) => argv.map((arg) => (/[\s"'\\]/.test(arg) ? JSON.stringify(arg) : arg)).join(" ")

/** `spool ralph <prompt> --change 001-01 --harness command --harness-command <command> --no-interactive ...extra`. */
export const loopArgs = (command, extra = []) => [
  "ralph",
  "Benchmark iteration.",
  "--change",
  CHANGE,
  "--harness",
  "command",
  "--harness-command",
  command,
  "--no-interactive",
  ...extra
]

export const runSpool = (args, cwd, env = {}) => {
  const result = spawnSync(process.execPath, [spoolBin, ...args], { cwd, env: spoolEnv(env), encoding: "utf8", input: "" })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

export const statusJson = (cwd) => {
  const result = runSpool(["ralph", "--status", "--json", "--change", CHANGE], cwd)
  if (result.code !== 0) throw new Error(`spool ralph --status --json: exit ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

export const stateDir = (cwd) => join(cwd, ".spool", ".state", "ralph", CHANGE_ID)

/** The last history record and the state file of a real run in `cwd`. */
export const lastRun = (cwd) => {
  const lines = readFileSync(join(stateDir(cwd), "history.jsonl"), "utf8").trim().split("\n")
  return { record: JSON.parse(lines.at(-1)), state: JSON.parse(readFileSync(join(stateDir(cwd), "state.json"), "utf8")) }
}

/**
 * Writes a history of `count` records shaped like `template` (a real record), one run per 50
 * iterations, and the matching state file, in the format spool itself writes.
 */
export const writeHistory = (cwd, { record, state }, count) => {
  const dir = stateDir(cwd)
  mkdirSync(dir, { recursive: true })
  const start = Date.parse("2026-01-01T00:00:00.000Z")
  const lines = []
  let run = ""
  let runStartedAt = ""
  for (let i = 0; i < count; i++) {
    const startedAt = new Date(start + i * 60_000).toISOString()
    if (i % 50 === 0) {
      run = `${startedAt.replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}-${(i / 50).toString(36).padStart(4, "0")}`
      runStartedAt = startedAt
    }
    lines.push(JSON.stringify({ ...record, run, iteration: (i % 50) + 1, startedAt, durationMs: 1000 + (i % 977) }))
  }
  writeFileSync(join(dir, "history.jsonl"), `${lines.join("\n")}\n`)
  const updatedAt = new Date(start + count * 60_000).toISOString()
  const iteration = ((count - 1) % 50) + 1
  writeFileSync(
    join(dir, "state.json"),
    `${JSON.stringify({ ...state, run, iteration, maxIterations: 50, status: "max-iterations", startedAt: runStartedAt, updatedAt }, null, 2)}\n`
  )
}
