// Where things are: the repository root, the built CLI, the example workspace, and `.bench/` for generated data.
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const rootDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
export const spoolBin = join(rootDir, "packages", "cli", "dist", "spool.js")
/** The bundle the bin loads (with its code cache), and its source map beside it. */
export const spoolBundle = join(rootDir, "packages", "cli", "dist", "spool-main.cjs")
/** The bundle a plain `spool ralph --status` runs from. */
export const spoolStatusBundle = join(rootDir, "packages", "cli", "dist", "spool-status.cjs")
export const examplesDir = join(rootDir, "examples")
export const benchDir = join(rootDir, ".bench")
export const opencodeBin = join(rootDir, "packages", "harness-opencode", "node_modules", ".bin", "opencode")
mkdirSync(benchDir, { recursive: true })
