import { Sandbox, type SandboxCommand, SandboxError, type SandboxRules, type WrappedCommand } from "@spool/core"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { tmpdir } from "node:os"

/** The runtime's module, loaded only when a sandbox is asked for: it costs a quarter of a second. */
type Runtime = typeof import("@anthropic-ai/sandbox-runtime")
type Manager = Runtime["SandboxManager"]

/** Each word of a command travels in a variable of its own: no word is ever spelled into shell text. */
const WORD = "SPOOL_SANDBOX_WORD_"
const TMPDIR = "SPOOL_SANDBOX_TMPDIR"

/** The shell that runs the runtime's script and spool's: POSIX's, on every system the runtime runs on. */
const SHELL = "/bin/sh"

const isLoopback = (host: string) => /^(?:localhost|127\.\d+\.\d+\.\d+|::1)(?::\d+)?$/.test(host)

/**
 * The shell text the runtime runs inside its walls: it names variables only. The runtime points
 * every client at its proxy but lets loopback bypass it, and loopback inside is the sandbox's own,
 * empty: so when an allowed host is on loopback, nothing bypasses the proxy. The temporary
 * directory is the loop's own, not the runtime's shared one.
 */
export const innerScript = (words: number, loopback: boolean) => {
  const names = Array.from({ length: words }, (_, i) => `${WORD}${i}`)
  return [
    ...(loopback ? ["unset NO_PROXY no_proxy"] : []),
    `export TMPDIR="$${TMPDIR}"`,
    `set -- ${names.map((name) => `"$${name}"`).join(" ")}`,
    `unset ${[TMPDIR, ...names].join(" ")}`,
    `exec "$@"`
  ].join("; ")
}

/** What installs the runtime's parts on Linux. */
const INSTALL = "on Debian or Ubuntu: sudo apt-get install -y bubblewrap socat ripgrep"

/** What is missing for the runtime on this machine, and what installs it; null when nothing is. */
export const missingParts = (manager: Manager): string | null => {
  if (!manager.isSupportedPlatform()) return `the sandbox runs on Linux and macOS, not ${process.platform}`
  const { errors } = manager.checkDependencies()
  if (errors.length === 0) return null
  return `${errors.join("; ")}${process.platform === "linux" ? `; ${INSTALL}` : ""}`
}

/** In spool's bundle (CommonJS) `require`, which loads the ES module; elsewhere `import`. */
declare const require: ((id: string) => unknown) | undefined

const loadRuntime = Effect.tryPromise({
  try: (): Promise<Runtime> =>
    typeof require === "function"
      ? Promise.resolve(require("@anthropic-ai/sandbox-runtime") as Runtime)
      : import("@anthropic-ai/sandbox-runtime"),
  catch: (error) => new SandboxError({ message: `the sandbox runtime cannot be loaded: ${String(error)}` })
})

const wrapWith = (manager: Manager) => (command: SandboxCommand, rules: SandboxRules) =>
  Effect.gen(function*() {
    // Unguessable, as the runtime requires: the id is all that ties a connection to its allowed hosts.
    const id = randomBytes(16).toString("base64url")
    yield* Effect.acquireRelease(
      Effect.try({
        try: () => manager.registerCommandNetworkLists(id, { allowedDomains: [...rules.hosts] }),
        catch: (error) => new SandboxError({ message: `an allowed host is not one: ${String(error)}` })
      }),
      () => Effect.sync(() => manager.unregisterCommandNetworkLists(id))
    )
    const words = [command.command, ...command.args]
    const { argv } = yield* Effect.tryPromise({
      try: () =>
        manager.wrapWithSandboxArgv(
          innerScript(words.length, rules.hosts.some(isLoopback)),
          // Not bash: given a socket for stdin, as a process runner's pipe is, bash takes itself for
          // a remote shell and reads ~/.bashrc first (half a second here, and the user's code).
          SHELL,
          { filesystem: { denyRead: [...rules.denyRead], allowWrite: [...rules.allowWrite], denyWrite: [...rules.denyWrite] } },
          undefined,
          command.cwd,
          { commandId: id, commandText: command.command }
        ),
      catch: (error) => new SandboxError({ message: String(error instanceof Error ? error.message : error) })
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => manager.cleanupAfterCommand()))
    const env: Record<string, string> = { ...command.env, [TMPDIR]: command.env.TMPDIR ?? rules.env.TMPDIR ?? "/tmp" }
    words.forEach((word, i) => {
      env[`${WORD}${i}`] = word
    })
    return { command: argv[0]!, args: argv.slice(1), env } satisfies WrappedCommand
  })

/** Runs `argv` to its end (no shell), with `env` alone: its exit code and the first line it wrote to stderr. */
const runToEnd = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string>>) =>
  Effect.async<{ readonly code: number | null; readonly error: string }>((resume) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "ignore", "pipe"] })
    let error = ""
    child.stderr.on("data", (bytes: Buffer) => (error += bytes.toString("utf8")))
    child.on("error", (cause) => resume(Effect.succeed({ code: null, error: cause.message })))
    child.on("close", (code) => resume(Effect.succeed({ code, error: error.trim().split("\n")[0] ?? "" })))
  })

/**
 * One process through the walls before any loop relies on them: where the platform cannot build
 * them (no user namespaces, a bubblewrap that refuses), the sandbox fails here, saying why.
 */
const probe = (wrap: ReturnType<typeof wrapWith>) =>
  Effect.scoped(Effect.gen(function*() {
    const rules: SandboxRules = { allowWrite: [], denyWrite: [], denyRead: [], hosts: [], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TMPDIR: tmpdir() } }
    const wrapped = yield* wrap({ command: "true", args: [], cwd: "/", env: rules.env }, rules)
    const ended = yield* runToEnd([wrapped.command, ...wrapped.args], wrapped.env)
    if (ended.code !== 0) {
      return yield* new SandboxError({
        message: `a process could not start inside it (${ended.error || `exit ${ended.code}`}); it needs user namespaces, which this system or its container may not allow`
      })
    }
  }))

/**
 * The sandbox on `@anthropic-ai/sandbox-runtime` (bubblewrap and socat on Linux, sandbox-exec on
 * macOS): checked (a missing part fails the layer, naming it), started once for the process (its
 * proxy denies every host no command was given), and stopped with the layer's scope.
 */
export const layer: Layer.Layer<Sandbox, SandboxError> = Layer.scoped(
  Sandbox,
  Effect.gen(function*() {
    const { SandboxManager } = yield* loadRuntime
    const missing = missingParts(SandboxManager)
    if (missing !== null) return yield* new SandboxError({ message: missing })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          SandboxManager.initialize({
            network: { allowedDomains: [], deniedDomains: [] },
            filesystem: { denyRead: [], allowWrite: [], denyWrite: [] }
          }),
        catch: (error) => new SandboxError({ message: `the sandbox cannot start: ${String(error instanceof Error ? error.message : error)}` })
      }),
      () => Effect.promise(() => SandboxManager.reset()).pipe(Effect.ignore)
    )
    const wrap = wrapWith(SandboxManager)
    yield* probe(wrap)
    return { runtime: process.platform === "darwin" ? "sandbox-exec" : "bubblewrap", wrap }
  })
)
