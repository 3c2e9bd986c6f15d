// Bundles the CLI and its workspace packages into one file that plain `node` runs, plus a V8 code
// cache for it: Node 20 has no module compile cache, and compiling the bundle was a third of startup.
import { execFileSync } from "node:child_process"
import { chmodSync, cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { build } from "esbuild"

const main = "dist/spool-main.cjs"
const loader = "dist/spool.js"
rmSync(`${main}.cache`, { force: true })

await build({
  entryPoints: ["src/bin.ts"],
  outfile: main,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  minify: true,
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning"
})

writeFileSync(
  loader,
  `#!/usr/bin/env node
// Runs spool-main.cjs through V8's code cache when spool-main.cjs.cache matches this Node.
import { readFileSync, writeFileSync } from "node:fs"
import Module, { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { setFlagsFromString } from "node:v8"
import { Script } from "node:vm"

// The same V8 flags when the cache is made and used, or V8 rejects it (the memory governor needs gc).
setFlagsFromString("--expose-gc")
const file = join(dirname(fileURLToPath(import.meta.url)), "spool-main.cjs")
let cachedData
try {
  cachedData = readFileSync(file + ".cache")
} catch {}
const script = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file, cachedData })
if (process.env.SPOOL_WRITE_CODE_CACHE === "1") {
  process.on("exit", () => writeFileSync(file + ".cache", script.createCachedData()))
}
const module = { exports: {} }
script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file))
`
)
chmodSync(loader, 0o755)

// Warm the cache with what `spool ralph --status` compiles, on a copy of the example workspace.
const workspace = mkdtempSync(join(tmpdir(), "spool-build-"))
try {
  cpSync(join("..", "..", "examples", "workspace"), workspace, { recursive: true })
  execFileSync(process.execPath, [join(process.cwd(), loader), "ralph", "--status", "--change", "001-01"], {
    cwd: workspace,
    env: { ...process.env, SPOOL_WRITE_CODE_CACHE: "1" },
    stdio: "ignore"
  })
} finally {
  rmSync(workspace, { recursive: true, force: true })
}
