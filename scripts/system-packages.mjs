#!/usr/bin/env node
// What the test suite needs from the system, beside Node.js and npm, and its installation: run by
// `pnpm test` before the first test. A missing package is installed with apt-get where this can
// (root, or sudo without a password, on a Debian-like system); elsewhere it stops with one line
// naming the packages and the command that installs them. No test skips for a missing tool.
import { spawnSync } from "node:child_process"
import { accessSync, constants } from "node:fs"
import { delimiter, join } from "node:path"
import { pathToFileURL } from "node:url"

/** Each need: the Debian package, what shows it is there, and what uses it. */
export const needs = [
  { pkg: "git", command: "git", usedBy: "every end-to-end test (repositories, git daemon)" },
  { pkg: "rsync", command: "rsync", usedBy: "gitlab-ci-local, which copies each job's files with it" },
  { pkg: "jq", command: "jq", usedBy: "the CI examples' step scripts" },
  { pkg: "chromium", path: "/usr/bin/chromium", usedBy: "the dashboard's browser tests" },
  { pkg: "bubblewrap", command: "bwrap", usedBy: "the sandbox's tests (--sandbox)" },
  { pkg: "socat", command: "socat", usedBy: "the sandbox's network proxy" },
  { pkg: "ripgrep", command: "rg", usedBy: "the sandbox runtime, which finds files to guard with it" },
  { pkg: "zsh", command: "zsh", usedBy: "the completion scripts' tests, which run them" },
  { pkg: "fish", command: "fish", usedBy: "the completion scripts' tests, which run them" }
]

const executable = (file) => {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Whether a command is on the PATH: looked up as a shell would, without a shell. */
export const onPath = (command, path = process.env.PATH ?? "") =>
  path.split(delimiter).some((dir) => dir !== "" && executable(join(dir, command)))

/** The needs that are not met, given how to tell a command or a file is there. */
export const missing = (list, present) => list.filter((need) => !present(need))

export const presentOnThisMachine = (need) => (need.path !== undefined ? executable(need.path) : onPath(need.command))

/** The argv that installs the packages: apt-get as root, else through sudo; null when neither can. */
export const installer = ({ uid, hasAptGet, hasSudo }) => {
  if (!hasAptGet) return null
  if (uid === 0) return []
  return hasSudo ? ["sudo", "-n"] : null
}

/** The one line said when the packages cannot be installed here. */
export const adviceLine = (list) =>
  `spool tests: missing ${list.map((need) => `${need.pkg} (${need.usedBy})`).join(", ")}; ` +
  `install ${list.length === 1 ? "it" : "them"} with: sudo apt-get install -y ${list.map((need) => need.pkg).join(" ")}`

const run = (argv) =>
  spawnSync(argv[0], argv.slice(1), {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  }).status === 0

const main = () => {
  const absent = missing(needs, presentOnThisMachine)
  if (absent.length === 0) return 0
  const sudoWorks = () => onPath("sudo") && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0
  const prefix = installer({ uid: process.getuid?.() ?? -1, hasAptGet: onPath("apt-get"), hasSudo: onPath("apt-get") && sudoWorks() })
  if (prefix !== null) {
    const packages = absent.map((need) => need.pkg)
    console.log(`spool tests: installing ${packages.join(" ")} with apt-get`)
    if (run([...prefix, "apt-get", "update", "-qq"])) run([...prefix, "apt-get", "install", "-y", "-qq", ...packages])
  }
  const still = missing(needs, presentOnThisMachine)
  if (still.length === 0) return 0
  console.error(adviceLine(still))
  return 1
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = main()
