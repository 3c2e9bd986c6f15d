import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const git = (cwd: string, ...args: Array<string>) => {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
  return result.stdout.trim()
}

/** A git repository on `main` with the changes named (module 001), each with one open task. */
export const repository = (ids: ReadonlyArray<string>) => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "spool-app-")))
  for (const id of ids) {
    mkdirSync(join(root, ".spool", "changes", id), { recursive: true })
    writeFileSync(join(root, ".spool", "changes", id, "proposal.md"), `# ${id}\n\nWrite ${id}.txt.\n`)
    writeFileSync(join(root, ".spool", "changes", id, "tasks.md"), `## 1. Work\n\n- [ ] 1.1 Write ${id}.txt\n`)
  }
  writeFileSync(join(root, "README.md"), "hello\n")
  git(root, "init", "-q", "-b", "main")
  git(root, "config", "user.name", "Test")
  git(root, "config", "user.email", "test@example.invalid")
  git(root, "add", "-A")
  git(root, "commit", "-qm", "initial")
  return root
}

/** An agent (a command line) that does its change's one task, ticks it, and says it is done. */
export const finishingAgent = () => {
  const file = join(mkdtempSync(join(tmpdir(), "spool-app-agent-")), "agent.mjs")
  writeFileSync(file, `
import { readFileSync, writeFileSync } from "node:fs"
const change = process.env.SPOOL_CHANGE
const tasks = ".spool/changes/" + change + "/tasks.md"
writeFileSync(change + ".txt", "done\\n")
writeFileSync(tasks, readFileSync(tasks, "utf8").replace("- [ ]", "- [x]"))
console.log("<promise>COMPLETE</promise>")
`)
  return `${process.execPath} ${file}`
}
