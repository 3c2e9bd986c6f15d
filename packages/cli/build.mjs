// Bundles the CLI and its workspace packages into one ESM file that plain `node` runs.
import { build } from "esbuild"
import { chmodSync } from "node:fs"

const outfile = "dist/spool.js"
await build({
  entryPoints: ["src/bin.ts"],
  outfile,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  minify: true,
  sourcemap: "linked",
  legalComments: "none",
  banner: {
    js: [
      "#!/usr/bin/env node",
      "import { createRequire as __spoolCreateRequire } from 'node:module';",
      "const require = __spoolCreateRequire(import.meta.url);"
    ].join("\n")
  },
  logLevel: "warning"
})
chmodSync(outfile, 0o755)
