// The `spool` bin: picks a bundle and runs it through V8's code cache when the cache matches this
// Node (Node 20 has no module compile cache; compiling the bundle was a third of startup).
import Module, { createRequire } from "node:module"
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Script } from "node:vm"
import { parseStatusArgs } from "./StatusArgs.js"

// The process, read once here; the bundle chosen reads it again, as the entry point it is.
const { argv, env } = process
// A plain `--status` needs no command-line parser, whose start-up alone is most of the budget.
const name = parseStatusArgs(argv.slice(2)) === null ? "spool-main.cjs" : "spool-status.cjs"
const file = join(dirname(fileURLToPath(import.meta.url)), name)
let cachedData: Buffer | undefined
try {
  cachedData = readFileSync(`${file}.cache`)
} catch {
  // No cache (or another Node made it): V8 compiles as usual.
}
const script = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file, ...(cachedData ? { cachedData } : {}) })
if (env.SPOOL_WRITE_CODE_CACHE === "1") {
  process.on("exit", () => writeFileSync(`${file}.cache`, script.createCachedData()))
}
const module = { exports: {} }
script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file))
