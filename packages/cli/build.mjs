// Builds the `spool` bin: a small loader (dist/spool.js) and two bundles that plain `node` runs:
// spool-main.cjs (everything) and spool-status.cjs (a plain `spool ralph --status`), each with a
// V8 code cache made here by running it once on a copy of the example workspace.
import { execFileSync } from "node:child_process"
import { chmodSync, cpSync, mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { build } from "esbuild"
import { pageDefine } from "./page.mjs"

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  // The dashboard's script, bundled for the browser, served from the bundle as a string.
  define: await pageDefine()
}
// The sandbox runtime (`--sandbox`), an ES module of its own beside the bundles, loaded only when
// asked for, with the helper programs it looks for beside itself (its Apache-2.0 licence with them).
const runtimeEntry = createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime")
const runtimeRoot = join(dirname(runtimeEntry), "..")
const SANDBOX_RUNTIME = "./spool-sandbox.mjs"
const sandboxRuntimeBeside = {
  name: "sandbox-runtime-beside",
  setup: (build) => build.onResolve({ filter: /^@anthropic-ai\/sandbox-runtime$/ }, () => ({ path: SANDBOX_RUNTIME, external: true }))
}

rmSync("dist", { recursive: true, force: true })
await Promise.all([
  build({
    ...common,
    entryPoints: [runtimeEntry],
    outfile: "dist/spool-sandbox.mjs",
    format: "esm",
    // Its CommonJS dependencies require Node's own modules.
    banner: { js: "import { createRequire as __spoolRequire } from 'node:module'; const require = __spoolRequire(import.meta.url);" }
  }),
  build({ ...common, entryPoints: ["src/loader.ts"], outfile: "dist/spool.js", format: "esm", banner: { js: "#!/usr/bin/env node" } }),
  build({ ...common, entryPoints: ["src/bin.ts"], outfile: "dist/spool-main.cjs", format: "cjs", sourcemap: "linked", plugins: [sandboxRuntimeBeside] }),
  build({ ...common, entryPoints: ["src/statusMain.ts"], outfile: "dist/spool-status.cjs", format: "cjs", sourcemap: "linked" })
])
chmodSync("dist/spool.js", 0o755)
for (const dir of ["vendor/seccomp/x64", "vendor/seccomp/arm64", "vendor/java-proxy-agent"]) {
  cpSync(join(runtimeRoot, dir), join("dist", dir), { recursive: true, filter: (file) => !file.endsWith(".ts") })
}
cpSync(join(runtimeRoot, "LICENSE"), "dist/vendor/LICENSE.sandbox-runtime")

const workspace = mkdtempSync(join(tmpdir(), "spool-build-"))
try {
  cpSync(join("..", "..", "examples", "workspace"), workspace, { recursive: true })
  const spool = (...args) =>
    execFileSync(process.execPath, [join(process.cwd(), "dist", "spool.js"), ...args], {
      cwd: workspace,
      env: { ...process.env, SPOOL_WRITE_CODE_CACHE: "1" },
      stdio: "ignore"
    })
  // One short loop warms the full bundle; the status it leaves behind warms the status bundle.
  const agent = `${process.execPath} -e "console.log('<promise>COMPLETE</promise>')"`
  spool("ralph", "warm up", "--change", "001-01", "--harness", "command", "--harness-command", agent, "--no-interactive")
  spool("ralph", "--status", "--change", "001-01")
} finally {
  rmSync(workspace, { recursive: true, force: true })
}
