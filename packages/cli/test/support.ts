import { spawn, spawnSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
export const spoolBin = join(here, "..", "dist", "spool.js")
export const examples = join(here, "..", "..", "..", "examples")
export const scriptedAgent = join(examples, "agent", "scripted-agent.mjs")

export interface SpoolResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Environment for spool under test: no CI marker leaking in, no TTY. */
export const baseEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...extra }
  delete env.CI
  return env
}

/**
 * Runs `command` with `args` (no shell) to completion without blocking this process: writes `input`
 * (default none) to its stdin and closes it, and resolves on `close` with its exit code, signal and
 * output. After `timeoutMs` (default none) a child still running is sent SIGTERM, and the promise
 * resolves with what it gave by then. Rejects only if the child cannot be started.
 */
export const runProgram = (
  command: string,
  args: ReadonlyArray<string>,
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}
): Promise<SpoolResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (d: string) => (stdout += d))
    child.stderr.on("data", (d: string) => (stderr += d))
    // A child that exits without reading its stdin must not make the write fail the run.
    child.stdin.on("error", () => {})
    child.stdin.end(options.input ?? "")
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill("SIGTERM"), options.timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })

/**
 * Runs the built `spool` binary to completion without blocking this process (a long synchronous
 * wait would stall the vitest worker past its RPC timeout). A run still going after 240 s is sent
 * SIGTERM and resolves with what it gave (code null, signal SIGTERM, if that ends it).
 */
export const spool = (
  args: ReadonlyArray<string>,
  options: { cwd: string; env?: Record<string, string>; input?: string } = { cwd: process.cwd() }
): Promise<SpoolResult> =>
  runProgram(process.execPath, [spoolBin, ...args], {
    cwd: options.cwd,
    env: baseEnv(options.env),
    input: options.input ?? "",
    timeoutMs: 240_000
  })

/** Starts the built `spool` binary and returns the child, for tests that signal or talk to it. */
export const spawnSpool = (args: ReadonlyArray<string>, options: { cwd: string; env?: Record<string, string> }) =>
  spawn(process.execPath, [spoolBin, ...args], { cwd: options.cwd, env: baseEnv(options.env), stdio: ["ignore", "pipe", "pipe"] })

export const git = (cwd: string, ...args: Array<string>) => {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
  return result.stdout.trim()
}

/** Makes `dir` a git repository on `main` with one commit of everything in it. */
export const commitAll = (dir: string) => {
  git(dir, "init", "-q", "-b", "main")
  git(dir, "config", "user.name", "Test")
  git(dir, "config", "user.email", "test@example.invalid")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "initial")
}

/** A copy of the example workspace in a fresh temporary directory, optionally a git repository with one commit. */
export const makeWorkspace = (options: { git?: boolean } = {}) => {
  const dir = mkdtempSync(join(tmpdir(), "spool-test-"))
  cpSync(join(examples, "workspace"), dir, { recursive: true })
  if (options.git !== false) commitAll(dir)
  return dir
}

/** Adds a change directory (with a proposal unless `proposal` is null). */
export const addChange = (root: string, id: string, proposal: string | null = `# ${id}\n`) => {
  const dir = join(root, ".spool", "changes", id)
  mkdirSync(dir, { recursive: true })
  if (proposal !== null) writeFileSync(join(dir, "proposal.md"), proposal)
  return dir
}

/** Writes an agent script outside the repository and returns the `--harness-command` that runs it. */
export const agentScript = (source: string) => {
  const file = join(mkdtempSync(join(tmpdir(), "spool-agent-")), "agent.mjs")
  writeFileSync(file, source)
  return `node ${file}`
}

export const stateDir = (root: string, changeId: string) => join(root, ".spool", ".state", "ralph", changeId)

/** Starts spool and watches its output. */
export const startSpool = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) => {
  const child = spawnSpool(args, { cwd, env })
  let out = ""
  child.stdout.on("data", (d) => (out += d))
  child.stderr.on("data", (d) => (out += d))
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal }))
  )
  const waitFor = async (text: string) => {
    for (let i = 0; i < 3000 && !out.includes(text); i++) await new Promise((r) => setTimeout(r, 10))
    if (!out.includes(text)) throw new Error(`never saw ${JSON.stringify(text)} in:\n${out}`)
  }
  return { child, done, waitFor, output: () => out }
}

/** Whether a process still runs: a zombie (killed, not yet reaped by its new parent) does not. */
const runs = (pid: number) => {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

/** A killed process takes a moment to go: wait up to two seconds for it. */
export const alive = async (pid: number) => {
  for (let i = 0; i < 100 && runs(pid); i++) await new Promise((r) => setTimeout(r, 20))
  return runs(pid)
}

/**
 * Runs `body` in a fresh workspace against a fake model server that `start` makes for it, with
 * the environment `env` gives the agent: its home at `home`, beside the workspace, so nothing of
 * the agent's lands in the work tree. The server is closed and the home removed afterwards.
 */
export const withFakeServer = async <S extends { readonly close: () => Promise<void> }, A>(
  start: (root: string) => Promise<S>,
  env: (server: S, home: string) => Record<string, string>,
  body: (server: S, root: string, env: Record<string, string>) => Promise<A>
): Promise<A> => {
  const root = makeWorkspace()
  const home = `${root}-agent`
  const server = await start(root)
  try {
    return await body(server, root, env(server, home))
  } finally {
    await server.close()
    rmSync(home, { recursive: true, force: true })
  }
}

/** Replaces the example change's proposal with one of over 300 KiB (quotes, `$`, backticks, tags) and returns it. */
export const writeBigProposal = (root: string): string => {
  const line = "A requirement with \"quotes\", $dollars, `backticks` and <tags>.\n"
  const proposal = `# Big proposal\n\nBEGIN-OF-PROPOSAL\n${line.repeat(Math.ceil((300 * 1024) / line.length))}END-OF-PROPOSAL\n`
  writeFileSync(join(root, ".spool", "changes", "001-01_greeting-cli", "proposal.md"), proposal)
  return proposal
}

/**
 * A git repository on `main` in `dir` (made when missing; a fresh temporary one by default) holding
 * `changes` (id -> extra files of the change), each with a proposal, and `files` at its root, all
 * committed.
 */
export const repositoryOf = (
  changes: Record<string, Record<string, string>>,
  files: Record<string, string> = {},
  dir: string = realpathSync(mkdtempSync(join(tmpdir(), "spool-repo-")))
) => {
  for (const [id, extra] of Object.entries(changes)) {
    mkdirSync(join(dir, ".spool", "changes", id), { recursive: true })
    writeFileSync(join(dir, ".spool", "changes", id, "proposal.md"), `# ${id}\n`)
    for (const [file, content] of Object.entries(extra)) writeFileSync(join(dir, ".spool", "changes", id, file), content)
  }
  for (const [file, content] of Object.entries({ "README.md": "hello\n", ...files })) {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), content)
  }
  git(dir, "init", "-q", "-b", "main")
  git(dir, "config", "user.name", "Test")
  git(dir, "config", "user.email", "test@example.invalid")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "initial")
  return dir
}

/** A bare remote of a repository with `changes`, and a function that clones it under `name`. */
export const remoteOf = (changes: Parameters<typeof repositoryOf>[0]) => {
  const origin = repositoryOf(changes)
  const base = realpathSync(mkdtempSync(join(tmpdir(), "spool-approve-remote-")))
  const bare = join(base, "origin.git")
  git(base, "clone", "-q", "--bare", origin, bare)
  const clone = (name: string) => {
    const at = join(base, name)
    git(base, "clone", "-q", bare, at)
    git(at, "config", "user.name", "Test")
    git(at, "config", "user.email", "test@example.invalid")
    return at
  }
  return { base, bare, clone }
}
