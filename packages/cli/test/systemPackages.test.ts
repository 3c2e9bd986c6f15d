import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { adviceLine, installer, missing, needs, onPath } from "../../../scripts/system-packages.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const script = join(root, "scripts", "system-packages.mjs")

describe("the test suite's system packages (scripts/system-packages.mjs)", () => {
  it("names what the tests use: git, rsync for gitlab-ci-local, jq, the chromium the browser tests launch, the sandbox's parts, and the shells the completion tests run", () => {
    expect(needs.map((need) => need.pkg)).toEqual(["git", "rsync", "jq", "chromium", "bubblewrap", "socat", "ripgrep", "zsh", "fish"])
    const browserTest = readFileSync(join(root, "packages", "cli", "test", "dashboard.browser.e2e.test.ts"), "utf8")
    const chromium = needs.find((need) => need.pkg === "chromium")!
    expect(browserTest).toContain(`const CHROMIUM = ${JSON.stringify(chromium.path)}`)
  })

  it("is run by the README's test command before anything else", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }
    expect(manifest.scripts["test"]!.startsWith("node scripts/system-packages.mjs && ")).toBe(true)
  })

  it("finds a command only where the PATH has it executable", () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-path-"))
    writeFileSync(join(dir, "tool"), "#!/bin/sh\n")
    writeFileSync(join(dir, "plain"), "")
    chmodSync(join(dir, "tool"), 0o755)
    expect(onPath("tool", `/nonexistent:${dir}`)).toBe(true)
    expect(onPath("plain", dir)).toBe(false)
    expect(onPath("tool", "")).toBe(false)
  })

  it("lists the needs that are not met, in order", () => {
    expect(missing(needs, (need) => need.pkg === "git" || need.pkg === "jq").map((need) => need.pkg)).toEqual(["rsync", "chromium", "bubblewrap", "socat", "ripgrep", "zsh", "fish"])
    expect(missing(needs, () => true)).toEqual([])
  })

  it("installs with apt-get as root, through sudo -n where it asks no password, and not at all otherwise", () => {
    expect(installer({ uid: 0, hasAptGet: true, hasSudo: false })).toEqual([])
    expect(installer({ uid: 1000, hasAptGet: true, hasSudo: true })).toEqual(["sudo", "-n"])
    expect(installer({ uid: 1000, hasAptGet: true, hasSudo: false })).toBeNull()
    expect(installer({ uid: 0, hasAptGet: false, hasSudo: true })).toBeNull()
  })

  it("says in one line what is missing, what uses it, and the command that installs it", () => {
    const rsync = needs.filter((need) => need.pkg === "rsync")
    expect(adviceLine(rsync)).toBe(
      "spool tests: missing rsync (gitlab-ci-local, which copies each job's files with it); install it with: sudo apt-get install -y rsync"
    )
    expect(adviceLine(needs.filter((need) => need.pkg !== "git"))).toMatch(/; install them with: sudo apt-get install -y rsync jq chromium bubblewrap socat ripgrep zsh fish$/)
  })

  it("stops before the tests with that line, exit 1, where it cannot install (no apt-get on the PATH)", () => {
    const empty = mkdtempSync(join(tmpdir(), "spool-empty-path-"))
    const result = spawnSync(process.execPath, [script], { env: { PATH: empty }, encoding: "utf8" })
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    const lines = result.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^spool tests: missing git \(every end-to-end test .*\), rsync \(.*\), jq \(.*\)/)
    expect(lines[0]).toMatch(/install them with: sudo apt-get install -y git rsync jq( chromium)? bubblewrap socat ripgrep zsh fish$/)
  })
})
