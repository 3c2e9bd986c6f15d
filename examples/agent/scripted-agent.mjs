#!/usr/bin/env node
// A stand-in for a coding agent, for the demo and tests: no model, no network.
// Each iteration it reads its prompt on stdin, does the first open task of tasks.md,
// fails once on purpose (task 1.2 at iteration 2), and prints the completion promise when every task is done.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const prompt = readFileSync(0, "utf8")
const change = process.env.SPOOL_CHANGE
const iteration = Number(process.env.SPOOL_ITERATION)
const tasksFile = join(".spool", "changes", change, "tasks.md")
const say = (line) => console.log(`[agent] ${line}`)

say(`iteration ${iteration}: read a prompt of ${prompt.length} characters`)
const context = /## Additional Context \(added by user mid-loop\)\n\n([\s\S]*?)\n\n---/.exec(prompt)
if (context) say(`using the context you added: "${context[1].trim()}"`)

const lines = readFileSync(tasksFile, "utf8").split("\n")
const open = lines.findIndex((line) => line.startsWith("- [ ]"))
if (open === -1) {
  say("every task is done and checked")
  console.log("<promise>COMPLETE</promise>")
  process.exit(0)
}

const task = lines[open].slice(6)
const work = {
  "1.1": () => writeFileSync("src/greet.js", "export const greet = (name) => `Hello, ${name}!`\n"),
  "1.2": () => {
    if (iteration === 2) {
      console.error("[agent] src/hello.js: test failed: expected 'Hello, Ada!' (simulated failure)")
      process.exit(1)
    }
    writeFileSync("src/hello.js", "import { greet } from \"./greet.js\"\nconsole.log(greet(process.argv[2] ?? \"world\"))\n")
  },
  "1.3": () => writeFileSync("NOTES.md", "Run `node src/hello.js Ada` to be greeted.\n")
}[task.split(" ")[0]]
say(`working on task ${task}`)
mkdirSync("src", { recursive: true })
work?.()
lines[open] = lines[open].replace("- [ ]", "- [x]")
writeFileSync(tasksFile, lines.join("\n"))
say(`task ${task.split(" ")[0]} done`)
if (!lines.some((line) => line.startsWith("- [ ]"))) {
  say("that was the last task: the change is complete")
  console.log("<promise>COMPLETE</promise>")
}

// Give the person at the keyboard a moment to add context after the first iteration (the demo does).
if (iteration === 1 && process.env.SPOOL_DEMO_WAIT_FOR_CONTEXT) {
  const contextFile = join(".spool", ".state", "ralph", change, "context.txt")
  const deadline = Date.now() + 15_000
  while (!existsSync(contextFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
}
