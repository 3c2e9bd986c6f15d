import { describe, expect, it } from "@effect/vitest"
import { makeWorkspace, scriptedAgent, spool } from "./support.js"

const change = "001-01"
const loopArgs = ["ralph", "Do the tasks.", "--change", change, "--harness", "command", "--harness-command", `node ${scriptedAgent}`, "--no-interactive"]

/** Everything spool prints for a few command lines, piped, in `env`. */
const outputs = async (env: Record<string, string>) => {
  const root = makeWorkspace()
  const run = (...args: Array<string>) => spool(args, { cwd: root, env })
  const loop = await run(...loopArgs)
  expect(loop.code).toBe(0)
  return {
    rootHelp: (await run("--help")).stdout,
    help: (await run("ralph", "--help")).stdout,
    loop: loop.stdout,
    loopErrors: loop.stderr,
    status: (await run("ralph", "--status", "--change", change)).stdout,
    statusFullParser: (await run("ralph", "--status", "--change", change, "--module", "001")).stdout,
    error: (await run("ralf")).stderr
  }
}

describe("colour only on a terminal", () => {
  it("piped: no escape sequences in help, the loop's output, summaries, --status or errors", async () => {
    const all = await outputs({ NO_COLOR: "" })
    expect(all.loop).toContain("complete: the promise was accepted")
    for (const [name, text] of Object.entries(all)) expect(text, name).not.toContain("\x1b")
    expect(all.loop).not.toContain("[spool] iteration")
  })

  it("piped with FORCE_COLOR: colour everywhere, and still no status line", async () => {
    const all = await outputs({ NO_COLOR: "", FORCE_COLOR: "1" })
    for (const name of ["rootHelp", "help", "loop", "status", "statusFullParser", "error"] as const) {
      expect(all[name], name).toContain("\x1b[")
    }
    expect(all.status).toBe(all.statusFullParser)
    expect(all.loop).not.toContain("[spool] iteration")
  })
})
