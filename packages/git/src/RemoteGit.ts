import { RemoteError } from "@spool/core"
import { Duration, Effect } from "effect"
import { type Ran, runGit } from "./GitProcess.js"

/** A URL's user and password (`https://user:token@host/...`), which git's messages may carry, hidden. */
export const hideCredentials = (text: string) => text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, "$1[REDACTED]@")

/** How long one git command against a remote may take by default before it counts as not answering. */
export const DEFAULT_WITHIN = Duration.minutes(5)

/** Where git runs for a remote, and for how long each command may. */
export interface RemoteGitOptions {
  /** The directory git runs in (the repository's root). */
  readonly root: string
  readonly remote: string
  /** The environment spool was started with; git never asks at a terminal. */
  readonly env: NodeJS.ProcessEnv
  /** Each git command's bound (default `DEFAULT_WITHIN`). */
  readonly within?: Duration.DurationInput
}

/** git's own words, the last lines, credentials hidden. */
const wordsOf = (ran: Ran, lines: number) =>
  hideCredentials((ran.stderr.trim() || ran.stdout.toString("utf8").trim() || `git exited with code ${ran.exitCode}`).split("\n").slice(-lines).join("; "))

/**
 * git for one remote: every command interruptible and bounded, its failure to start or to finish
 * in time a `RemoteError` for `action`.
 */
export const remoteGit = (options: RemoteGitOptions) => {
  const { remote } = options
  const within = Duration.decode(options.within ?? DEFAULT_WITHIN)
  const env = { ...options.env, GIT_TERMINAL_PROMPT: "0" }
  /** Runs git; any exit code is an answer. */
  const git = (action: string, args: ReadonlyArray<string>, input?: string | Uint8Array, cwd = options.root) =>
    runGit(args, { cwd, env, within, ...(input === undefined ? {} : { input }) }).pipe(
      Effect.catchTags({
        GitNotStarted: (error) => Effect.fail(new RemoteError({ remote, action, detail: `git could not be started: ${error.detail}` })),
        GitTimedOut: () =>
          Effect.fail(new RemoteError({ remote, action, detail: `\`git ${args[0] ?? ""}\` did not finish within ${Duration.format(within)}` }))
      })
    )
  const failed = (action: string, ran: Ran, lines = 3) => new RemoteError({ remote, action, detail: wordsOf(ran, lines) })
  /** The output, trimmed, of a command that must exit 0. */
  const must = (action: string, args: ReadonlyArray<string>, input?: string | Uint8Array, cwd?: string) =>
    Effect.flatMap(git(action, args, input, cwd), (ran) => (ran.exitCode === 0 ? Effect.succeed(ran.stdout.toString("utf8").trim()) : Effect.fail(failed(action, ran))))
  /** The output, whole and as bytes, of a command that must exit 0. */
  const bytes = (action: string, args: ReadonlyArray<string>) =>
    Effect.flatMap(git(action, args), (ran) => (ran.exitCode === 0 ? Effect.succeed(ran.stdout) : Effect.fail(failed(action, ran))))
  return { remote, git, failed, must, bytes }
}
