import type { Env, InvocationShape } from "@spool/app/host"
import type { Output } from "../TerminalReporter.js"

/** A signal that stops spool: Ctrl-C, SIGTERM, its terminal closing. */
export const stopSignals = ["SIGINT", "SIGTERM", "SIGHUP"] as const
export type Signal = typeof stopSignals[number]

/** Where the process's signals arrive, and listeners are added and taken away (Node's `process`). */
export interface SignalSource {
  readonly on: (signal: Signal, listener: () => void) => unknown
  readonly off: (signal: Signal, listener: () => void) => unknown
}

/** Node's stdout or stderr: written to, and telling when a write failed. */
export interface ProcessOutput extends Output {
  readonly on: (event: "error", listener: (error: NodeJS.ErrnoException) => void) => unknown
  readonly off: (event: "error", listener: (error: NodeJS.ErrnoException) => void) => unknown
}

/**
 * What an entry point of spool (`bin.ts`, `statusMain.ts`) takes from Node's `process`: read once,
 * at its top, and handed down, so that nothing below it reads process-wide state.
 */
export interface Started {
  readonly argv: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Env
  readonly pid: number
  readonly stdout: ProcessOutput
  readonly stderr: ProcessOutput
}

/** What the full command takes besides: the invocation, the signals, and the way out. */
export interface StartedMain extends Started {
  readonly invocation: InvocationShape
  readonly signals: SignalSource
  /** Ends the process with `code` at once: the runtime's teardown alone calls it. */
  readonly exit: (code: number) => void
}

/** The little `--status` needs: no terminal on stdin is asked about, so stdin is never opened. */
export const read = (process: NodeJS.Process): Started => ({
  argv: process.argv,
  cwd: process.cwd(),
  env: process.env,
  pid: process.pid,
  stdout: process.stdout,
  stderr: process.stderr
})

export const readMain = (process: NodeJS.Process): StartedMain => {
  const started = read(process)
  return {
    ...started,
    invocation: {
      cwd: started.cwd,
      env: started.env,
      pid: started.pid,
      stdinIsTTY: process.stdin.isTTY === true,
      isRoot: process.getuid?.() === 0
    },
    signals: process,
    exit: (code) => process.exit(code)
  }
}
