// Builds a TypeScript probe from bench/probe/ the way the CLI's own build does (esbuild, one
// minified ESM file for Node 20), resolving packages as the CLI package does; into `.bench/`.
import { createRequire } from "node:module"
import { join } from "node:path"
import { benchDir, rootDir } from "./paths.mjs"

const cli = join(rootDir, "packages", "cli")

export const bundleProbe = async (name) => {
  // esbuild is installed for the CLI's build; resolved from there, it adds no dependency.
  const { build } = createRequire(join(cli, "package.json"))("esbuild")
  const outfile = join(benchDir, `${name}.mjs`)
  await build({
    entryPoints: [join(rootDir, "bench", "probe", `${name}.ts`)],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    minify: true,
    nodePaths: [join(cli, "node_modules"), join(rootDir, "packages", "git", "node_modules")],
    banner: { js: "import { createRequire as __benchCreateRequire } from 'node:module';\nconst require = __benchCreateRequire(import.meta.url);" },
    logLevel: "warning"
  })
  return outfile
}
