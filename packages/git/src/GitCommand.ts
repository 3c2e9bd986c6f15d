import { GitError } from "@spool/core"
import { Duration, Effect } from "effect"
import { GitError as SimpleGitError, simpleGit, type SimpleGit, type SimpleGitOptions } from "simple-git"
import { runGit } from "./GitProcess.js"

/**
 * How long one local git command may take before it is stopped and counts as failed: far beyond
 * any the loop runs in a large repository, so that only a git that hangs (a lock it waits on, a
 * hook that never ends) meets it.
 */
export const LOCAL_BOUND = Duration.minutes(10)

/**
 * A git process that exited non-zero; simple-git's default ignores a non-zero exit with a silent stderr.
 * It extends simple-git's error class because simple-git wraps any other error into a bare string.
 */
class GitExit extends SimpleGitError {
  constructor(readonly exitCode: number, readonly output: string) {
    super(undefined, output)
  }
}

interface Outcome {
  readonly exitCode: number
  readonly output: string
}

/** What a direct command may add: text on its standard input. */
export interface QuietOptions {
  readonly input?: string
}

/** Runs git commands (argv arrays, never a shell) in one directory. */
export interface GitCommand {
  /** The standard output of a command that must exit 0. */
  readonly run: (operation: string, args: ReadonlyArray<string>) => Effect.Effect<string, GitError>
  /** Like `run`, but git's "no" (exit 1: unborn HEAD, a diff that differs) is null instead of an error. */
  readonly runOrNull: (operation: string, args: ReadonlyArray<string>) => Effect.Effect<string | null, GitError>
  /**
   * `run` for commands that print nothing when they succeed (`add`, `commit -q`): simple-git waits
   * 50 ms after every such command, so these go to git directly (argv, no shell).
   */
  readonly runQuiet: (operation: string, args: ReadonlyArray<string>, options?: QuietOptions) => Effect.Effect<string, GitError>
  /** The same commands against another index file, leaving the real index alone. */
  readonly withIndexFile: (indexFile: string) => GitCommand
}

/**
 * Passing `GIT_INDEX_FILE` means handing simple-git a whole environment, and it then vets the user's own
 * variables (EDITOR, GIT_CONFIG_GLOBAL, ...) as if they were injected; ours are fixed argv, so trust it.
 */
const trustInheritedEnvironment: Required<Omit<NonNullable<SimpleGitOptions["unsafe"]>, "allowUnsafeCustomBinary">> = {
  allowUnsafeAlias: true,
  allowUnsafeAskPass: true,
  allowUnsafeConfigPaths: true,
  allowUnsafeConfigEnvCount: true,
  allowUnsafeCredentialHelper: true,
  allowUnsafeEditor: true,
  allowUnsafeMergeDriver: true,
  allowUnsafePager: true,
  allowUnsafeProtocolOverride: true,
  allowUnsafePack: true,
  allowUnsafeSshCommand: true,
  allowUnsafeGitProxy: true,
  allowUnsafeHooksPath: true,
  allowUnsafeDiffExternal: true,
  allowUnsafeDiffTextConv: true,
  allowUnsafeFilter: true,
  allowUnsafeFsMonitor: true,
  allowUnsafeGpgProgram: true,
  allowUnsafeTemplateDir: true
}

/** A client whose commands simple-git stops when `abort` fires (an interrupt). */
const makeClient = (cwd: string, indexFile: string | null, abort: AbortSignal): SimpleGit => {
  const client = simpleGit({
    baseDir: cwd,
    abort,
    // The process's `close` event alone says it is done; the default also waits 50 ms after `exit`
    // of any command that prints nothing (`git add -A`), which every snapshot paid.
    completion: { onClose: true, onExit: false },
    errors: (error, result) =>
      result.exitCode === 0
        ? error
        : new GitExit(result.exitCode, Buffer.concat([...result.stdErr, ...result.stdOut]).toString("utf8")),
    ...(indexFile === null ? {} : { unsafe: trustInheritedEnvironment })
  })
  return indexFile === null ? client : client.env({ ...process.env, GIT_INDEX_FILE: indexFile })
}

/** Git's own words, shortened to what fits in a warning line. */
const describeOutput = (output: string): string => {
  const lines = output.split("\n").map((line) => line.trim()).filter((line) => line.length > 0)
  const text = lines.slice(-12).join(" / ")
  return text.length > 1000 ? `...${text.slice(-1000)}` : text
}

const failure = (operation: string, args: ReadonlyArray<string>, outcome: Outcome) =>
  new GitError({
    operation,
    // The subcommand alone: a commit message or a list of paths would drown git's own words.
    detail: `\`git ${args[0] ?? ""}\` exited with code ${outcome.exitCode}` +
      (outcome.output.trim() === "" ? "" : `: ${describeOutput(outcome.output)}`)
  })

const makeCommand = (cwd: string, indexFile: string | null): GitCommand => {
  const timedOut = (operation: string, args: ReadonlyArray<string>) => () =>
    new GitError({ operation, detail: `\`git ${args[0] ?? ""}\` did not finish within ${Duration.format(LOCAL_BOUND)} in ${cwd}; it was stopped` })

  /**
   * The client, and what stops its commands: an interrupted command aborts them all (simple-git
   * takes one abort signal a client) and the next command gets a new client.
   */
  let current: { readonly client: SimpleGit; readonly stop: AbortController } | null = null
  const client = () => {
    if (current === null) {
      const stop = new AbortController()
      current = { client: makeClient(cwd, indexFile, stop.signal), stop }
    }
    return current
  }
  // simple-git checks the directory as a client is made: the first is made with the command.
  client()

  /** Through simple-git, interruptible (its abort signal) and bounded by `LOCAL_BOUND`. */
  const execute = (operation: string, args: ReadonlyArray<string>) =>
    Effect.tryPromise({
      try: (interrupted) => {
        const used = client()
        interrupted.addEventListener("abort", () => {
          used.stop.abort()
          if (current === used) current = null
        })
        return used.client.raw([...args]).then(
          (output): Outcome => ({ exitCode: 0, output }),
          (cause: unknown): Outcome => {
            if (cause instanceof GitExit) return { exitCode: cause.exitCode, output: cause.output }
            throw cause
          }
        )
      },
      catch: (cause) =>
        new GitError({
          operation,
          detail: `could not run \`git ${args.join(" ")}\` in ${cwd}: ${
            cause instanceof Error ? cause.message : String(cause)
          }`
        })
    }).pipe(Effect.timeoutFail({ duration: LOCAL_BOUND, onTimeout: timedOut(operation, args) }))

  /** git itself, for commands that print nothing (`GitProcess`: interruptible, bounded). */
  const executeDirect = (operation: string, args: ReadonlyArray<string>, options: QuietOptions = {}) =>
    runGit(args, {
      cwd,
      env: indexFile === null ? process.env : { ...process.env, GIT_INDEX_FILE: indexFile },
      within: LOCAL_BOUND,
      ...(options.input === undefined ? {} : { input: options.input })
    }).pipe(
      Effect.map((ran): Outcome => ({ exitCode: ran.exitCode, output: ran.exitCode === 0 ? ran.stdout.toString("utf8") : `${ran.stderr}${ran.stdout.toString("utf8")}` })),
      Effect.catchTags({
        GitNotStarted: (error) => Effect.fail(new GitError({ operation, detail: `could not run \`git ${args[0] ?? ""}\` in ${cwd}: ${error.detail}` })),
        GitTimedOut: () => Effect.fail(timedOut(operation, args)())
      })
    )

  const exitZero = (operation: string, args: ReadonlyArray<string>) => (outcome: Outcome) =>
    outcome.exitCode === 0 ? Effect.succeed(outcome.output) : Effect.fail(failure(operation, args, outcome))

  return {
    run: (operation, args) => Effect.flatMap(execute(operation, args), exitZero(operation, args)),
    runQuiet: (operation, args, options) => Effect.flatMap(executeDirect(operation, args, options), exitZero(operation, args)),
    runOrNull: (operation, args) =>
      Effect.flatMap(execute(operation, args), (outcome) =>
        outcome.exitCode === 0
          ? Effect.succeed(outcome.output)
          : outcome.exitCode === 1
          ? Effect.succeed(null)
          : Effect.fail(failure(operation, args, outcome))),
    withIndexFile: (file) => makeCommand(cwd, file)
  }
}

/** Fails (rather than throwing) when `cwd` is not a directory. */
export const make = (cwd: string): Effect.Effect<GitCommand, GitError> =>
  Effect.try({
    try: () => makeCommand(cwd, null),
    catch: (cause) =>
      new GitError({ operation: "open", detail: `${cwd} is not a directory git can run in: ${String(cause)}` })
  })
