import { countTokens, formatDuration, formatSpend, formatTokensShort, type HarnessUsage, type LoopProgress } from "@spool/core"
import type { Palette } from "./Colour.js"

/** What the run reported so far, short: `$0.42 · 15.2k tokens`. */
const spendOf = (usage: HarnessUsage) => formatSpend({ costUsd: usage.cost, tokens: countTokens(usage) }, { tokens: formatTokensShort })

/** `iteration 3/20 · 4m12s · $0.42 · 15.2k tokens` */
const loopStatus = (progress: LoopProgress, elapsedMs: number) => {
  const spend = progress.usage === null ? "" : spendOf(progress.usage)
  return [`iteration ${progress.iteration}/${progress.maxIterations}`, formatDuration(elapsedMs), ...(spend === "" ? [] : [spend])].join(" · ")
}

/** `[spool] iteration 3/20 · 4m12s · $0.42 · 15.2k tokens` */
export const statusLine = (progress: LoopProgress, elapsedMs: number) => `[spool] ${loopStatus(progress, elapsedMs)}`

/** Several loops side by side: `[spool] 002-01 iteration 3/20 · 4m12s | 003-01 iteration 1/20 · 10s` */
export const statusLines = (loops: ReadonlyArray<{ readonly label: string; readonly progress: LoopProgress; readonly elapsedMs: number }>) =>
  `[spool] ${loops.map((loop) => `${loop.label} ${loopStatus(loop.progress, loop.elapsedMs)}`).join(" | ")}`

/** The loop's own lines, coloured by what they say. */
export const colourLine = (p: Palette, text: string) =>
  text.startsWith("=== ")
    ? p.bold(p.cyan(text))
    : text.startsWith("--- ")
    ? / -> complete$/.test(text) ? p.green(text) : / -> (failed|timeout|interrupted)$/.test(text) ? p.red(text) : p.dim(text)
    : text.startsWith("complete:")
    ? p.green(text)
    : text.startsWith("stopped:")
    ? p.yellow(text)
    : text

/** Each line of `text` that starts at a line start begins with `prefix`: as text, or as pieces of bytes to write in turn. */
export const prefixLines = (prefix: string, text: string, atLineStart: boolean): string => {
  let out = ""
  let from = 0
  let start = atLineStart
  while (from < text.length) {
    const newline = text.indexOf("\n", from)
    const end = newline === -1 ? text.length : newline + 1
    out += start ? prefix + text.slice(from, end) : text.slice(from, end)
    from = end
    start = newline !== -1
  }
  return out
}

export const prefixByteLines = (prefix: string, bytes: Uint8Array, atLineStart: boolean): Array<string | Uint8Array> => {
  const pieces: Array<string | Uint8Array> = []
  let from = 0
  let start = atLineStart
  while (from < bytes.length) {
    const newline = bytes.indexOf(10, from)
    const end = newline === -1 ? bytes.length : newline + 1
    if (start) pieces.push(prefix)
    // A window of the lent bytes, written during the write like the whole would be.
    pieces.push(bytes.subarray(from, end))
    from = end
    start = newline !== -1
  }
  return pieces
}
