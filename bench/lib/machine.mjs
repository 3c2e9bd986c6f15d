// The machine and the code a run measured, for the record.
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { availableParallelism, loadavg, totalmem } from "node:os"
import { rootDir } from "./paths.mjs"

const output = (command, args) => {
  const result = spawnSync(command, args, { cwd: rootDir, encoding: "utf8" })
  return result.status === 0 ? result.stdout.trim() : null
}

const cpuModel = () => {
  if (!existsSync("/proc/cpuinfo")) return "unknown"
  return /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1].trim() ?? "unknown"
}

const osName = () => {
  if (!existsSync("/etc/os-release")) return process.platform
  return /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(readFileSync("/etc/os-release", "utf8"))?.[1] ?? process.platform
}

export const machine = () => ({
  cpus: availableParallelism(),
  cpuModel: cpuModel(),
  memoryGiB: totalmem() / 1024 ** 3,
  os: `${osName()}, Linux ${output("uname", ["-r"]) ?? "?"}`,
  node: process.version,
  git: output("git", ["--version"])?.replace(/^git version /, "") ?? "not found",
  loadAverage: loadavg()[0],
  commit: output("git", ["rev-parse", "--short", "HEAD"]) ?? "unknown",
  // Others may be editing the sources: the build measured includes whatever packages/ held.
  uncommittedSources: (output("git", ["status", "--porcelain", "--", "packages"]) ?? "") !== ""
})
