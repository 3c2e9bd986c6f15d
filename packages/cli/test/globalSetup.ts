import { execFileSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export default function setup() {
  const cli = join(dirname(fileURLToPath(import.meta.url)), "..")
  execFileSync(process.execPath, ["build.mjs"], { cwd: cli, stdio: "inherit" })
}
