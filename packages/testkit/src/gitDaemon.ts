import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { makeTempDirectory } from "./fakeHttpServer.js"

/*
 * A real git remote for the tests that push: `git daemon` on 127.0.0.1 at a free port, serving
 * (fetch and push, no authentication) the bare repositories of one private directory over git://.
 */

export interface GitDaemon {
  readonly port: number
  /** The directory whose bare repositories it serves (`<name>.git`). */
  readonly base: string
  /** `git://127.0.0.1:<port>/<name>.git` */
  readonly url: (name: string) => string
  /** The path of the bare repository `name` (whether or not it exists yet). */
  readonly bare: (name: string) => string
  /**
   * Creates the bare repository `name` (HEAD on `main`), holding every branch and tag of `fromRepo`
   * when given; returns its path.
   */
  readonly createBare: (name: string, fromRepo?: string) => string
  /** Stops the daemon and waits until it has gone; the base directory is left (see `remove`). */
  readonly stop: () => Promise<void>
}

export interface GitDaemonOptions {
  /** The directory to serve; a new private directory by default. */
  readonly base?: string
}

/** `git` in `cwd`, its standard output (a failure throws, its standard error in the message). */
export const git = (cwd: string, ...args: Array<string>): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

/** The outcome of a `git` that may fail: its exit code and both outputs. */
export interface GitResult {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** `git` in `cwd` without throwing: its exit code and outputs, for the commands meant to be refused. */
export const tryGit = (cwd: string, ...args: Array<string>): GitResult => {
  try {
    return { status: 0, stdout: git(cwd, ...args), stderr: "" }
  } catch (error) {
    const e = error as { status?: number | null; stdout?: string; stderr?: string }
    return { status: e.status ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" }
  }
}

/** Clones `url` into `dir` with a local identity, so commits in it need no global configuration; returns `dir`. */
export const newClone = (url: string, dir: string): string => {
  execFileSync("git", ["clone", "-q", url, dir], { stdio: ["ignore", "pipe", "pipe"] })
  git(dir, "config", "user.name", "Spool Test")
  git(dir, "config", "user.email", "spool@example.com")
  git(dir, "config", "commit.gpgsign", "false")
  return dir
}

// Daemons still running when the process exits are killed then: a test that forgot `stop` leaves none.
const running = new Set<ChildProcess>()
let exitHookInstalled = false
const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  try {
    // The group: `git`, the `git-daemon` it runs, and the daemon's children serving connections.
    process.kill(-child.pid!, signal)
  } catch {
    // Already gone.
  }
}
const installExitHook = () => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on("exit", () => {
    for (const child of running) killGroup(child, "SIGKILL")
  })
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

type Launch = { readonly ok: true; readonly child: ChildProcess } | { readonly ok: false; readonly log: string }

/** Starts the daemon on `port`: ready once it logs that it listens, refused when it exits first (the port taken). */
const launch = (base: string, port: number): Promise<Launch> =>
  new Promise((resolve) => {
    const child = spawn(
      "git",
      [
        "daemon",
        // Logs "Ready to rumble" once it listens: readiness without polling.
        "--verbose",
        "--reuseaddr",
        "--listen=127.0.0.1",
        `--port=${port}`,
        `--base-path=${base}`,
        "--export-all",
        "--enable=receive-pack",
        "--informative-errors",
        base
      ],
      { cwd: base, detached: true, stdio: ["ignore", "ignore", "pipe"] }
    )
    let log = ""
    let settled = false
    child.stderr!.setEncoding("utf8")
    child.stderr!.on("data", (chunk: string) => {
      // Read for as long as it runs (a full pipe would stall it); keep only the tail for messages.
      log = (log + chunk).slice(-8_000)
      if (!settled && log.includes("Ready to rumble")) {
        settled = true
        resolve({ ok: true, child })
      }
    })
    child.once("error", (error) => {
      if (settled) return
      settled = true
      resolve({ ok: false, log: `${log}${String(error)}` })
    })
    child.once("exit", () => {
      running.delete(child)
      if (settled) return
      settled = true
      resolve({ ok: false, log })
    })
    running.add(child)
    installExitHook()
  })

/** Starts `git daemon` on 127.0.0.1 at a free port, serving the bare repositories of `options.base`. */
export const startGitDaemon = async (options: GitDaemonOptions = {}): Promise<GitDaemon> => {
  const base = options.base ?? makeTempDirectory("spool-git-daemon-")
  fs.mkdirSync(base, { recursive: true })
  const failures: Array<string> = []
  for (let attempt = 0; attempt < 5; attempt++) {
    // The port was free a moment ago; another process may take it first, then the daemon exits and we try another.
    const port = await freePort()
    const started = await launch(base, port)
    if (!started.ok) {
      failures.push(`port ${port}: ${started.log.trim()}`)
      continue
    }
    const child = started.child
    // Neither the daemon nor its output keeps the test process alive; the exit hook kills it.
    child.unref()
    ;(child.stderr as net.Socket).unref()
    const bare = (name: string) => path.join(base, `${name}.git`)
    return {
      port,
      base,
      url: (name) => `git://127.0.0.1:${port}/${name}.git`,
      bare,
      createBare: (name, fromRepo) => {
        const dir = bare(name)
        execFileSync("git", ["init", "-q", "--bare", "-b", "main", dir], { stdio: ["ignore", "pipe", "pipe"] })
        if (fromRepo !== undefined) git(fromRepo, "push", "-q", dir, "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*")
        return dir
      },
      stop: () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) {
            running.delete(child)
            return resolve()
          }
          child.ref()
          child.once("exit", () => {
            clearTimeout(hard)
            resolve()
          })
          killGroup(child, "SIGTERM")
          // git waits for the daemon it runs before it exits; one that ignores SIGTERM is killed.
          const hard = setTimeout(() => killGroup(child, "SIGKILL"), 5_000)
        })
    }
  }
  throw new Error(`git daemon did not start:\n${failures.join("\n")}`)
}
