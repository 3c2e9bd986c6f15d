import { Data, Duration, Effect } from "effect"
import { spawn } from "node:child_process"

/** What a git process did: its exit code and its output, whole. */
export interface Ran {
  readonly exitCode: number
  readonly stdout: Buffer
  readonly stderr: string
}

/** git could not be started at all (no binary, no such directory). */
export class GitNotStarted extends Data.TaggedError("GitNotStarted")<{ readonly args: ReadonlyArray<string>; readonly detail: string }> {}

/** git did not finish within its bound; it was stopped. */
export class GitTimedOut extends Data.TaggedError("GitTimedOut")<{ readonly args: ReadonlyArray<string>; readonly within: Duration.Duration }> {}

export interface GitProcessOptions {
  readonly cwd: string
  /** Written to git's standard input, which is closed after it (empty when not given). */
  readonly input?: string | Uint8Array
  /** The whole environment git runs with. */
  readonly env: NodeJS.ProcessEnv
  /** How long it may take before it is stopped and `GitTimedOut` is the answer. */
  readonly within: Duration.DurationInput
}

/** How long a stopped git has to clean up its lock files after SIGTERM before SIGKILL. */
const CLEAN_UP = 2_000

/** Signals git's whole process group (its transport helpers, ssh, with it); gone already is fine. */
const signalGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is gone.
  }
}

/**
 * Runs git (an argv array, never a shell) in its own process group. It is interruptible, and
 * bounded by `within` on the `Clock`: either way the group gets SIGTERM, which lets git remove
 * its lock files, then SIGKILL if it is still there, and the effect ends once the process has.
 */
export const runGit = (args: ReadonlyArray<string>, options: GitProcessOptions): Effect.Effect<Ran, GitNotStarted | GitTimedOut> =>
  Effect.async<Ran, GitNotStarted>((resume) => {
    const child = spawn("git", [...args], { cwd: options.cwd, env: options.env, detached: true, stdio: ["pipe", "pipe", "pipe"] })
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
    let started = true
    child.on("error", (error) => {
      started = false
      resume(Effect.fail(new GitNotStarted({ args, detail: error.message })))
    })
    const closed = new Promise<void>((done) =>
      child.on("close", (code, signal) => {
        done()
        if (!started) return
        resume(Effect.succeed({
          exitCode: code ?? (signal === null ? 1 : 128),
          stdout: Buffer.concat(stdout),
          stderr: Buffer.concat(stderr).toString("utf8")
        }))
      })
    )
    // A command that reads no input may exit before taking it: its closed pipe is not an error.
    child.stdin.on("error", () => undefined)
    child.stdin.end(options.input ?? "")
    return Effect.promise(async () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
      signalGroup(child.pid, "SIGTERM")
      const killer = setTimeout(() => signalGroup(child.pid!, "SIGKILL"), CLEAN_UP)
      await closed
      clearTimeout(killer)
    })
  }).pipe(
    Effect.timeoutFail({ duration: options.within, onTimeout: () => new GitTimedOut({ args, within: Duration.decode(options.within) }) })
  )
