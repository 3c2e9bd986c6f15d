import { formatDuration, type HarnessUsage, type LoopProgress, LoopReporter } from "@spool/core"
import { Effect, Layer } from "effect"
import { colourEnabled, type Palette, palette, redrawEnabled } from "./Colour.js"

interface Output {
  readonly isTTY?: boolean
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

const tokens = (usage: HarnessUsage) => {
  const n = usage.inputTokens + usage.outputTokens + usage.reasoningTokens
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k tokens` : `${n} tokens`
}

const cost = (usd: number) => `$${usd.toFixed(usd < 0.1 ? 3 : 2)}`

/** `[spool] iteration 3/20 · 4m12s · $0.42 · 15.2k tokens` */
export const statusLine = (progress: LoopProgress, elapsedMs: number) =>
  [
    `[spool] iteration ${progress.iteration}/${progress.maxIterations}`,
    formatDuration(elapsedMs),
    ...(progress.usage === null ? [] : [...(progress.usage.cost === null ? [] : [cost(progress.usage.cost)]), tokens(progress.usage)])
  ].join(" · ")

/** The loop's own lines, coloured by what they say. */
const colourLine = (p: Palette, text: string) =>
  text.startsWith("=== ")
    ? p.bold(p.cyan(text))
    : text.startsWith("--- ")
    ? / -> complete$/.test(text) ? p.green(text) : / -> (failed|timeout|interrupted)$/.test(text) ? p.red(text) : p.dim(text)
    : text.startsWith("complete:")
    ? p.green(text)
    : text.startsWith("stopped:")
    ? p.yellow(text)
    : text

/**
 * Live output and summaries on stdout, warnings on stderr. On a terminal, a dim status line (where
 * the loop stands) sits below the agent's output while it is at the start of a line, redrawn in
 * place; piped, the output is the plain lines alone.
 */
export const makeTerminalReporter = (stdout: Output, stderr: Output, env: Readonly<Record<string, string | undefined>>) => {
  const out = palette(colourEnabled(stdout, env))
  const err = palette(colourEnabled(stderr, env))
  const live = redrawEnabled(stdout, env)
  let progress: LoopProgress | null = null
  let startedAt = 0
  let atLineStart = true
  // The width of the status line on screen (0: none). It is erased with spaces, not an escape
  // sequence, so that without colour the output has no escape sequences at all.
  let shown = 0
  const clear = () => {
    if (shown > 0) stdout.write(`\r${" ".repeat(shown)}\r`)
    shown = 0
  }
  const draw = () => {
    if (!live || progress === null || !atLineStart || shown > 0) return
    const text = statusLine(progress, Date.now() - startedAt)
    stdout.write(out.dim(text))
    shown = text.length
  }
  const redraw = () => {
    clear()
    draw()
  }
  const timer = live ? setInterval(redraw, 1000) : null
  timer?.unref()
  const service: LoopReporter["Type"] = {
    // The agent's output waits for the terminal (or pipe) to take it: an agent printing faster
    // than it is read is held back rather than buffered in memory.
    write: (output) =>
      Effect.suspend(() => {
        clear()
        if (typeof output !== "string") {
          // Bytes are written as they came; the batch they are part of is reused once they are out.
          atLineStart = output[output.length - 1] === 10
          return Effect.async<void>((resume) => {
            stdout.write(output, () => {
              draw()
              resume(Effect.void)
            })
          })
        }
        const accepted = stdout.write(output)
        atLineStart = output.endsWith("\n")
        draw()
        return drained(stdout, accepted)
      }),
    line: (text) =>
      Effect.sync(() => {
        clear()
        stdout.write(`${colourLine(out, text)}\n`)
        atLineStart = true
        draw()
      }),
    warn: (text) =>
      Effect.sync(() => {
        clear()
        stderr.write(`${err.yellow("warning:")} ${text}\n`)
        draw()
      }),
    progress: (next) =>
      Effect.sync(() => {
        if (progress === null) startedAt = Date.now()
        progress = next
        redraw()
      })
  }
  const close = () => {
    if (timer !== null) clearInterval(timer)
    clear()
    progress = null
    if (erase === clear) erase = null
  }
  erase = clear
  return { service, close }
}

let erase: (() => void) | null = null

/** Erases the live status line, if one is shown, before something else is written to the terminal. */
export const eraseStatusLine = () => erase?.()

export const layer = Layer.scoped(
  LoopReporter,
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => makeTerminalReporter(process.stdout, process.stderr, process.env)),
      (reporter) => Effect.sync(reporter.close)
    ),
    (reporter) => reporter.service
  )
)
