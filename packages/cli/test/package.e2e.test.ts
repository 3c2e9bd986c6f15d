import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { addChange, baseEnv, commitAll, runProgram } from "./support.js"

const cliDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const repositoryRoot = join(cliDir, "..", "..")

// What the package holds: the loader (the bin), the two bundles with their V8 code caches, the
// sandbox runtime's module with the helper programs it finds beside itself (and its licence), and
// the manifest, README and LICENSE npm always adds. The source maps stay out (20 MB, three times
// the rest, of which nothing reads at run time), as do the sources and tests.
const published = [
  "LICENSE",
  "README.md",
  "dist/spool-main.cjs",
  "dist/spool-main.cjs.cache",
  "dist/spool-sandbox.mjs",
  "dist/spool-status.cjs",
  "dist/spool-status.cjs.cache",
  "dist/spool.js",
  "dist/vendor/LICENSE.sandbox-runtime",
  "dist/vendor/java-proxy-agent/srt-proxy-agent.jar",
  "dist/vendor/seccomp/arm64/apply-seccomp",
  "dist/vendor/seccomp/x64/apply-seccomp",
  "package.json"
].sort()

/**
 * An environment with nothing of this checkout in it: no NODE_PATH, and none of the settings
 * (`npm_*`) a package manager running the tests passes down to its children.
 */
const outsideEnv = (): NodeJS.ProcessEnv => {
  const env = baseEnv()
  for (const key of Object.keys(env)) if (/^npm_/i.test(key) || key === "NODE_PATH") delete env[key]
  return env
}

const filesUnder = (dir: string, prefix = ""): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`]
  )

interface Packed {
  readonly name: string
  readonly version: string
  readonly filename: string
  readonly files: ReadonlyArray<{ readonly path: string }>
}

describe("the npm package spool-ralph (npm pack, then npm install -g of the tarball, offline)", () => {
  const work = mkdtempSync(join(tmpdir(), "spool-package-"))
  const cache = join(work, "npm-cache")
  const prefix = join(work, "prefix")
  const installed = join(prefix, "lib", "node_modules", "spool-ralph")
  const bin = join(prefix, "bin", "spool")
  const npmFlags = ["--cache", cache, "--no-audit", "--no-fund", "--no-update-notifier"]
  let packed: Packed
  let tarball: string

  beforeAll(async () => {
    mkdirSync(prefix)
    const pack = await runProgram("npm", ["pack", "--json", "--pack-destination", work, ...npmFlags], { cwd: cliDir, env: outsideEnv() })
    expect(pack.code, pack.stderr).toBe(0)
    packed = (JSON.parse(pack.stdout) as ReadonlyArray<Packed>)[0]!
    tarball = join(work, packed.filename)
    // No dependencies to fetch: --offline fails the install if it needs the registry at all.
    const install = await runProgram("npm", ["install", "-g", "--prefix", prefix, "--offline", ...npmFlags, tarball], {
      cwd: work,
      env: outsideEnv()
    })
    expect(install.code, install.stderr).toBe(0)
  }, 300_000)

  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it("holds the bin, the bundles, README and LICENSE, and a manifest with no dependencies", async () => {
    expect(packed.name).toBe("spool-ralph")
    expect(packed.files.map((file) => file.path).sort()).toEqual(published)
    const unpacked = join(work, "unpacked")
    mkdirSync(unpacked)
    const untar = await runProgram("tar", ["-xzf", tarball, "-C", unpacked])
    expect(untar.code, untar.stderr).toBe(0)
    const root = join(unpacked, "package")
    expect(filesUnder(root).sort()).toEqual(published)

    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    // npm packs the manifest as it is (its bin path already in the form npm writes).
    expect(manifest).toEqual(JSON.parse(readFileSync(join(cliDir, "package.json"), "utf8")))
    expect(manifest).toMatchObject({ name: "spool-ralph", license: "MIT", bin: { spool: "dist/spool.js" }, engines: { node: ">=20.19" } })
    expect(manifest).not.toHaveProperty("private")
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies", "bundleDependencies", "bundledDependencies"]) {
      expect(manifest, field).not.toHaveProperty(field)
    }

    // The package's LICENSE is a copy of the repository's; both READMEs name this version's tarball.
    expect(readFileSync(join(root, "LICENSE"), "utf8")).toBe(readFileSync(join(repositoryRoot, "LICENSE"), "utf8"))
    const install = `npm install -g ./spool-ralph-${manifest.version}.tgz`
    expect(readFileSync(join(root, "README.md"), "utf8")).toContain(install)
    expect(readFileSync(join(repositoryRoot, "README.md"), "utf8")).toContain(install)
  })

  it("installs as the tarball alone: no node_modules, nothing else installed, `spool` runs a loop to completion", async () => {
    expect(readdirSync(join(prefix, "lib", "node_modules")).filter((name) => !name.startsWith("."))).toEqual(["spool-ralph"])
    expect(existsSync(join(installed, "node_modules"))).toBe(false)
    expect(filesUnder(installed).sort()).toEqual(published)
    expect(realpathSync(bin)).toBe(realpathSync(join(installed, "dist", "spool.js")))

    const repo = mkdtempSync(join(tmpdir(), "spool-package-repo-"))
    addChange(repo, "001-01_x")
    commitAll(repo)
    const run = (args: ReadonlyArray<string>) => runProgram(bin, args, { cwd: repo, env: outsideEnv(), timeoutMs: 240_000 })

    const version = await run(["--version"])
    expect(version.code, version.stderr).toBe(0)
    expect(version.stdout.trim()).toBe(packed.version)

    const agent = `${process.execPath} -e "console.log('<promise>COMPLETE</promise>')"`
    const loop = await run(["ralph", "Finish the change.", "--change", "001-01", "--harness", "command", "--harness-command", agent, "--no-interactive"])
    expect(loop.code, loop.stderr).toBe(0)
    expect(loop.stdout).toContain("complete: the promise was accepted at iteration 1")

    const status = await run(["ralph", "--status", "--json", "--change", "001-01"])
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ changeId: "001-01_x", status: "complete", iteration: 1 })

    // The sandbox from the tarball alone: its module and its seccomp helper, which it finds beside itself.
    addChange(repo, "001-02_y")
    commitAll(repo)
    const walled = `sh -c "echo out > ${repo}-escaped.txt || echo refused; echo '<promise>COMPLETE</promise>'"`
    const sandboxed = await run(["ralph", "x", "--change", "001-02", "--harness", "command", "--harness-command", walled, "--no-interactive", "--sandbox"])
    expect(sandboxed.code, sandboxed.stderr).toBe(0)
    expect(sandboxed.stdout).toContain("refused")
    expect(existsSync(`${repo}-escaped.txt`)).toBe(false)
    const walls = await run(["ralph", "--status", "--json", "--change", "001-02"])
    expect(JSON.parse(walls.stdout)).toMatchObject({ status: "complete", sandbox: { runtime: "bubblewrap" } })
  })

  it("runs without a code cache, and with one V8 refuses (made for other code)", async () => {
    // A code cache holds V8's compilation of one bundle for one Node and set of V8 flags; any other
    // Node, flags or bundle and V8 refuses it, and the loader compiles the bundle as usual.
    const dist = join(installed, "dist")
    copyFileSync(join(dist, "spool-status.cjs.cache"), join(dist, "spool-main.cjs.cache"))
    rmSync(join(dist, "spool-status.cjs.cache"))
    const repo = mkdtempSync(join(tmpdir(), "spool-package-repo-"))
    addChange(repo, "001-01_x")
    commitAll(repo)
    const run = (args: ReadonlyArray<string>) => runProgram(bin, args, { cwd: repo, env: outsideEnv(), timeoutMs: 240_000 })

    const version = await run(["--version"])
    expect(version.code, version.stderr).toBe(0)
    expect(version.stdout.trim()).toBe(packed.version)
    const status = await run(["ralph", "--status", "--json", "--change", "001-01"])
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ changeId: "001-01_x", status: "none", iteration: 0 })
  })
})
