import { type LentBytes, type LoopProgress, LoopReporter } from "@spool/core"
import { type Clock, Context, Duration, Effect, Layer, Schedule, type Scope } from "effect"
import { colourEnabled, palette, redrawEnabled } from "./Colour.js"
import { Reports } from "@spool/app"
import type { Env } from "@spool/app/host"
import { colourLine, prefixByteLines, prefixLines, statusLine, statusLines } from "./StatusLine.js"

export { statusLine } from "./StatusLine.js"

export interface Output {
  readonly isTTY?: boolean
  /** The terminal's width, when it is one: a status line of several loops is cut to it. */
  readonly columns?: number
  /** `done` is called once the output no longer needs what was written. */
  readonly write: (data: string | Uint8Array, done?: (error?: Error | null) => void) => unknown
  /** Where a write that returned false is waited for (`drain`), when the output can say. */
  readonly once?: (event: "drain", listener: () => void) => unknown
}

/** Waits until `stream` has taken what was written, when its last write said it was full. */
const drained = (stream: Output, accepted: unknown) =>
  accepted !== false || stream.once === undefined
    ? Effect.void
    : Effect.async<void>((resume) => void stream.once!("drain", () => resume(Effect.void)))

/** One loop attached to the terminal. */
interface Attached {
  readonly changeId: string
  progress: LoopProgress | null
  startedAt: number
}

const shortId = (changeId: string) => changeId.split("_")[0]!

/** A loop's own reporter on the terminal, and how it lets go of it. */
export interface Attachment {
  readonly service: LoopReporter["Type"]
  /** Detaches the loop; with `now`, the loops left are shown at once. */
  readonly close: (now?: number) => void
}

/**
 * The one writer of stdout and stderr: live output and summaries on stdout, warnings and errors on
 * stderr. On a terminal, a dim status line (where the loops stand) sits below the agents' output
 * while it is at the start of a line, redrawn in place; piped, the output is the plain lines alone.
 * Each loop attached gets its own reporter; while a sweep runs its loops side by side, their lines
 * begin `[<change>] `.
 */
export const makeTerminal = (stdout: Output, stderr: Output, env: Env) => {
  const out = palette(colourEnabled(stdout, env))
  const err = palette(colourEnabled(stderr, env))
  const live = redrawEnabled(stdout, env)
  const loops: Array<Attached> = []
  let atLineStart = true
  // Whose output the line in progress is: another loop's line is ended before a loop writes.
  let lineOwner: Attached | null = null
  // The width of the status line on screen (0: none). It is erased with spaces, not an escape
  // sequence, so that without colour the output has no escape sequences at all.
  let shown = 0
  // The changes of the sweep whose loops run side by side, for as long as it runs: a property of
  // the sweep, not of how many loops run at the moment (null: one loop at a time).
  let sideBySide: ReadonlyArray<string> | null = null

  /** The short id (`002-01`), or the whole one where another change of the sweep has the same short id. */
  const label = (loop: Attached) =>
    (sideBySide ?? []).some((other) => other !== loop.changeId && shortId(other) === shortId(loop.changeId)) ? loop.changeId : shortId(loop.changeId)
  /** Nothing for a loop on its own, as spool has always written; `[002-01] ` for every loop of a sweep side by side. */
  const prefix = (loop: Attached) => sideBySide === null ? "" : `[${label(loop)}] `

  const status = (now: number): string | null => {
    const running = loops.filter((loop) => loop.progress !== null)
    if (running.length === 0) return null
    if (sideBySide === null) return statusLine(running[0]!.progress!, now - running[0]!.startedAt)
    const text = statusLines(running.map((loop) => ({ label: label(loop), progress: loop.progress!, elapsedMs: now - loop.startedAt })))
    return stdout.columns !== undefined && text.length >= stdout.columns ? text.slice(0, Math.max(stdout.columns - 1, 0)) : text
  }
  const clear = () => {
    if (shown > 0) stdout.write(`\r${" ".repeat(shown)}\r`)
    shown = 0
  }
  const draw = (now: number) => {
    if (!live || !atLineStart || shown > 0) return
    const text = status(now)
    if (text === null) return
    stdout.write(out.dim(text))
    shown = text.length
  }
  /** Side by side, a loop's output starts on a line of its own. */
  const takeLine = (loop: Attached) => {
    if (sideBySide === null || atLineStart || lineOwner === loop) return
    stdout.write("\n")
    atLineStart = true
  }

  const attach = (changeId: string): Attachment => {
    const loop: Attached = { changeId, progress: null, startedAt: 0 }
    loops.push(loop)
    const service: LoopReporter["Type"] = {
      // The agent's output waits for the terminal (or pipe) to take it: an agent printing faster
      // than it is read is held back rather than buffered in memory.
      write: (output) =>
        Effect.clockWith((clock) =>
          Effect.suspend(() => {
            clear()
            takeLine(loop)
            const tag = prefix(loop)
            lineOwner = loop
            if (typeof output !== "string") return writeBytes(clock, tag, output)
            const accepted = stdout.write(tag === "" ? output : prefixLines(tag, output, atLineStart))
            atLineStart = output.endsWith("\n")
            draw(clock.unsafeCurrentTimeMillis())
            return drained(stdout, accepted)
          })
        ),
      line: (text) =>
        Effect.clockWith((clock) =>
          Effect.sync(() => {
            clear()
            takeLine(loop)
            stdout.write(`${atLineStart ? prefix(loop) : ""}${colourLine(out, text)}\n`)
            atLineStart = true
            draw(clock.unsafeCurrentTimeMillis())
          })
        ),
      warn: (text) =>
        Effect.clockWith((clock) =>
          Effect.sync(() => {
            clear()
            stderr.write(`${prefix(loop)}${err.yellow("warning:")} ${text}\n`)
            draw(clock.unsafeCurrentTimeMillis())
          })
        ),
      progress: (next) =>
        Effect.clockWith((clock) =>
          Effect.sync(() => {
            const now = clock.unsafeCurrentTimeMillis()
            if (loop.progress === null) loop.startedAt = now
            loop.progress = next
            clear()
            draw(now)
          })
        )
    }
    const close = (now?: number) => {
      const at = loops.indexOf(loop)
      if (at === -1) return
      clear()
      loops.splice(at, 1)
      if (lineOwner === loop) lineOwner = null
      if (now !== undefined) draw(now)
    }
    return { service, close }
  }

  /** Bytes are written as they came; the batch they are part of is reused once they are out. */
  const writeBytes = (clock: Clock.Clock, tag: string, output: LentBytes) => {
    const pieces = tag === "" ? [output] : prefixByteLines(tag, output, atLineStart)
    atLineStart = output[output.length - 1] === 10
    return Effect.async<void>((resume) => {
      pieces.forEach((piece, i) => {
        if (i < pieces.length - 1) return void stdout.write(piece)
        stdout.write(piece, () => {
          draw(clock.unsafeCurrentTimeMillis())
          resume(Effect.void)
        })
      })
    })
  }

  return {
    live,
    stdoutPalette: out,
    stderrPalette: err,
    attach,
    /**
     * For as long as the scope lasts, the loops of `changeIds` run side by side: each loop's lines
     * begin with its change and the status line names each loop, however many run at the moment.
     */
    sideBySide: (changeIds: ReadonlyArray<string>): Effect.Effect<void, never, Scope.Scope> =>
      Effect.acquireRelease(Effect.sync(() => void (sideBySide = changeIds)), () => Effect.sync(() => void (sideBySide = null))),
    /** A loop's reporter for as long as the scope lasts. */
    reporterFor: (changeId: string): Effect.Effect<LoopReporter["Type"], never, Scope.Scope> =>
      Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => attach(changeId)),
          (attachment) => Effect.clockWith((clock) => Effect.sync(() => attachment.close(clock.unsafeCurrentTimeMillis())))
        ),
        (attachment) => attachment.service
      ),
    /** Text and a newline on stdout: the answer of a command that is not a loop. */
    print: (text: string) =>
      Effect.sync(() => {
        clear()
        stdout.write(`${text}\n`)
      }),
    /** `spool: <message>` on stderr, the prefix in red on a terminal; `afterBreak` ends the line in progress first (after a `^C`). */
    error: (message: string, options: { readonly afterBreak?: boolean } = {}) => {
      clear()
      if (options.afterBreak === true) stderr.write("\n")
      stderr.write(`${err.red("spool:")} ${message}\n`)
    },
    /** `warning: <text>` on stderr, as a loop's warnings are, for what no one loop says (a notice that could not be told). */
    warn: (text: string) => {
      clear()
      stderr.write(`${err.yellow("warning:")} ${text}\n`)
    },
    /** Erases the live status line, if one is shown, before something else is written to the terminal. */
    erase: clear,
    /** The status line drawn again: the elapsed time moves on. */
    redraw: Effect.clockWith((clock) =>
      Effect.sync(() => {
        clear()
        draw(clock.unsafeCurrentTimeMillis())
      })
    )
  }
}

export type Terminal = ReturnType<typeof makeTerminal>

/** The terminal spool writes to: its process's stdout and stderr, or captured ones in a test. */
export class TerminalReporter extends Context.Tag("@spool/cli/TerminalReporter")<TerminalReporter, Terminal>() {}

/** Provides `terminal`, redrawing its status line every second while the scope lasts (on a terminal). */
export const layer = (terminal: Terminal) =>
  Layer.scoped(
    TerminalReporter,
    Effect.as(
      terminal.live ? Effect.forkScoped(Effect.repeat(terminal.redraw, Schedule.spaced(Duration.seconds(1)))) : Effect.void,
      terminal
    )
  )

/** What the application's runs and sweeps say, on the terminal: each loop attached to it while it runs. */
export const reports = Layer.effect(
  Reports,
  Effect.map(TerminalReporter, (terminal) => ({
    print: terminal.print,
    warn: (text: string) => Effect.sync(() => terminal.warn(text)),
    reporterFor: terminal.reporterFor,
    sideBySide: terminal.sideBySide
  }))
)

/** A terminal that collects what is written to it: not a TTY, no colour unless `env` asks for it. */
export const capture = (env: Env = {}) => {
  const chunks = { stdout: [] as Array<string>, stderr: [] as Array<string> }
  const stream = (into: Array<string>): Output => ({
    isTTY: false,
    write: (data, done) => {
      into.push(typeof data === "string" ? data : new TextDecoder().decode(data))
      done?.()
      return true
    }
  })
  const terminal = makeTerminal(stream(chunks.stdout), stream(chunks.stderr), env)
  return { terminal, stdout: () => chunks.stdout.join(""), stderr: () => chunks.stderr.join(""), layer: layer(terminal) }
}
