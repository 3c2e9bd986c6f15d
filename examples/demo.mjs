#!/usr/bin/env node
// The demo: copies the example workspace into a temporary git repository and runs a real
// `spool ralph` loop on it with the scripted agent (no model, no network). While the loop runs,
// it adds context from "another terminal" with `spool ralph --add-context`; then it prints --status.
import { spawn, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const spool = join(here, "..", "packages", "cli", "dist", "spool.js")
const agent = join(here, "agent", "scripted-agent.mjs")
const repo = mkdtempSync(join(tmpdir(), "spool-demo-"))

const run = (cmd, args) => {
  const result = spawnSync(cmd, args, { cwd: repo, stdio: "inherit" })
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited with ${result.status}`)
}
// Bold only on a terminal that wants colour, as spool itself does.
const bold = process.stdout.isTTY && !process.env.NO_COLOR && process.env.TERM !== "dumb"
const step = (text) => console.log(bold ? `\n\x1b[1m$ ${text}\x1b[0m` : `\n$ ${text}`)

cpSync(join(here, "workspace"), repo, { recursive: true })
run("git", ["init", "-q", "-b", "main"])
run("git", ["-c", "user.name=Demo", "-c", "user.email=demo@example.invalid", "add", "-A"])
run("git", ["-c", "user.name=Demo", "-c", "user.email=demo@example.invalid", "commit", "-qm", "Example workspace"])
run("git", ["config", "user.name", "Demo"])
run("git", ["config", "user.email", "demo@example.invalid"])
console.log(`demo repository: ${repo}`)

const loopArgs = [
  "ralph", "Implement the change, one task per iteration.",
  "--change", "001-01",
  "--harness", "command", "--harness-command", `node ${agent}`,
  "--no-interactive"
]
step(`spool ${loopArgs.map((a) => (a.includes(" ") ? `"${a}"` : a)).join(" ")}`)
const loop = spawn(process.execPath, [spool, ...loopArgs], {
  cwd: repo,
  env: { ...process.env, SPOOL_DEMO_WAIT_FOR_CONTEXT: "1" },
  stdio: ["ignore", "pipe", "inherit"]
})
let contextAdded = false
let pending = ""
loop.stdout.on("data", (chunk) => {
  process.stdout.write(chunk)
  pending = (pending + chunk.toString()).slice(-4096)
  if (!contextAdded && pending.includes("[agent] task 1.1 done")) {
    contextAdded = true
    step("spool ralph --add-context \"Greet people warmly.\" --change 001-01   # from another terminal")
    run(process.execPath, [spool, "ralph", "--add-context", "Greet people warmly.", "--change", "001-01"])
  }
})
const code = await new Promise((resolve) => loop.on("close", (c) => resolve(c ?? 1)))

step("spool ralph --status --change 001-01")
run(process.execPath, [spool, "ralph", "--status", "--change", "001-01"])
step("git log --oneline")
run("git", ["--no-pager", "log", "--oneline"])
console.log(`\nthe loop exited with code ${code}`)
process.exit(code)
