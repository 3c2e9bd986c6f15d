import type { Env } from "@spool/app/host"

/** A stream as far as colour is concerned: is a person looking at it? */
interface Stream {
  readonly isTTY?: boolean
}

const set = (value: string | undefined) => value !== undefined && value !== ""

/**
 * Colour on a terminal only: off when the stream is not a TTY, with `NO_COLOR` or `TERM=dumb`;
 * `FORCE_COLOR` (other than `0` or `false`) turns it on and wins over both.
 */
export const colourEnabled = (stream: Stream, env: Env): boolean => {
  if (set(env.FORCE_COLOR)) return env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false"
  if (set(env.NO_COLOR) || env.TERM === "dumb") return false
  return stream.isTTY === true
}

/** Whether a line may be redrawn in place (`\r`, erase line): a real terminal only, whatever FORCE_COLOR says. */
export const redrawEnabled = (stream: Stream, env: Env): boolean =>
  stream.isTTY === true && env.TERM !== "dumb"

export interface Palette {
  readonly bold: (text: string) => string
  readonly dim: (text: string) => string
  readonly red: (text: string) => string
  readonly green: (text: string) => string
  readonly yellow: (text: string) => string
  readonly cyan: (text: string) => string
}

const sgr = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`
const plain = (text: string) => text

export const palette = (enabled: boolean): Palette =>
  enabled
    ? { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) }
    : { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain }
