import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { baseEnv, makeWorkspace, runProgram } from "./support.js"

const cliDir = join(dirname(fileURLToPath(import.meta.url)), "..")

describe("installing the spool bin for use in another repository", () => {
  it("`npm install -g <spool>/packages/cli` puts a working `spool` on the PATH", async () => {
    const prefix = mkdtempSync(join(tmpdir(), "spool-prefix-"))
    const install = await runProgram("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", cliDir], {
      env: baseEnv()
    })
    expect(install.code, install.stderr).toBe(0)
    const repo = makeWorkspace()
    const status = await runProgram("spool", ["ralph", "--status", "--change", "001-01"], {
      cwd: repo,
      env: baseEnv({ PATH: `${join(prefix, "bin")}:${process.env.PATH}` })
    })
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toContain("change:    001-01_greeting-cli")
    expect(status.stdout).toContain("no loop has run for this change yet")
  })
})
