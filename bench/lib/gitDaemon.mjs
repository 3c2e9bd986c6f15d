// A git remote on this machine: `git daemon` on 127.0.0.1 at a free port, serving (fetch and push,
// no authentication) the bare repositories of one directory over git://. The same start as the
// tests' (packages/testkit/src/gitDaemon.ts), which the benchmarks do not depend on, but for its log.
import { spawn } from "node:child_process"
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { git } from "./repo.mjs"

const running = new Set()
const killGroup = (child, signal) => {
  try {
    // The group: `git`, the `git-daemon` it runs, and the daemon's children serving connections.
    process.kill(-child.pid, signal)
  } catch {
    // Already gone.
  }
}
process.on("exit", () => running.forEach((child) => killGroup(child, "SIGKILL")))

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Starts the daemon on `port`: ready once it logs that it listens, refused when it exits first (the
 * port taken). Its log goes to a file, not a pipe: the benchmarks time programs with spawnSync, which
 * stops this process from reading a pipe, and a daemon whose log pipe is full accepts no connection.
 */
const launch = async (base, port) => {
  const logFile = join(base, `.daemon-${port}.log`)
  const fd = openSync(logFile, "w")
  const child = spawn(
    "git",
    ["daemon", "--verbose", "--reuseaddr", "--listen=127.0.0.1", `--port=${port}`, `--base-path=${base}`, "--export-all", "--enable=receive-pack", "--informative-errors", base],
    { cwd: base, detached: true, stdio: ["ignore", "ignore", fd] }
  )
  closeSync(fd)
  running.add(child)
  let failed = null
  child.once("error", (error) => (failed = String(error)))
  child.once("exit", () => {
    running.delete(child)
    failed ??= "exited"
  })
  const log = () => readFileSync(logFile, "utf8").slice(-8_000)
  for (let waited = 0; waited < 10_000; waited += 20) {
    // "Ready to rumble" once it listens: readiness without connecting to it.
    if (log().includes("Ready to rumble")) return { ok: true, child }
    if (failed !== null) return { ok: false, log: `${log()}${failed}` }
    await sleep(20)
  }
  killGroup(child, "SIGKILL")
  return { ok: false, log: `${log()}not ready after 10 s` }
}

/**
 * Starts `git daemon` serving the bare repositories of `base` (created if missing). Returns its
 * port, `url(name)` and `bare(name)` of the repository `<name>.git`, and `stop()`.
 */
export const startGitDaemon = async (base) => {
  mkdirSync(base, { recursive: true })
  const failures = []
  for (let attempt = 0; attempt < 5; attempt++) {
    // The port was free a moment ago; another process may take it first, then the daemon exits and we try another.
    const port = await freePort()
    const started = await launch(base, port)
    if (!started.ok) {
      failures.push(`port ${port}: ${started.log.trim()}`)
      continue
    }
    const { child } = started
    child.unref()
    return {
      port,
      url: (name) => `git://127.0.0.1:${port}/${name}.git`,
      bare: (name) => join(base, `${name}.git`),
      stop: () =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) {
            running.delete(child)
            return resolve()
          }
          child.ref()
          const hard = setTimeout(() => killGroup(child, "SIGKILL"), 5_000)
          child.once("exit", () => {
            clearTimeout(hard)
            resolve()
          })
          killGroup(child, "SIGTERM")
        })
    }
  }
  throw new Error(`git daemon did not start:\n${failures.join("\n")}`)
}

/** Creates the bare repository `dir` (HEAD on `main`) holding every branch of `fromRepo`. */
export const createBare = (dir, fromRepo) => {
  git(fromRepo, "init", "-q", "--bare", "-b", "main", dir)
  git(fromRepo, "push", "-q", dir, "refs/heads/*:refs/heads/*")
  return dir
}
