import { type DecodedLine, readKeptLine, textOfLine } from "../bytes/JsonLine.js"
import { type BufferedLine, LONG_LINE, makeLineBuffer, MAX_LINE_LENGTH } from "../bytes/LineBuffer.js"
import { HarnessEvent } from "./HarnessService.js"

/** The events one line (or the end of the run) means, in order. */
export type HarnessEvents = Array<HarnessEvent>

/** The first line of `text`, trimmed (a `\r` before its line feed too), cut at `max` characters. */
export const firstLine = (text: string, max = 160): string => {
  const first = text.trim().split("\n", 1)[0]!.trimEnd()
  return first.length > max ? `${first.slice(0, max - 1)}…` : first
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g

/** `text` without its terminal colour and cursor codes. */
export const stripAnsi = (text: string): string => text.replace(ANSI, "")

/** `text` shown as a line of its own in the live view. */
export const showLine = (out: HarnessEvents, text: string): void =>
  void out.push(HarnessEvent.Display({ text: text.endsWith("\n") ? text : `${text}\n` }))

/**
 * What a JSON harness says about its agent: how a stdout line decodes, and what each event,
 * stderr line and the end of the run mean. `makeJsonOutput` does the rest.
 */
export interface JsonReader<E> {
  /** The agent's name, in what is shown about lines too long to read. */
  readonly agent: string
  /** Reads one stdout line (its `\r` dropped). */
  readonly decodeLine: (line: string) => DecodedLine<E>
  /**
   * Matched against the first 64 KiB of a long JSON line: when it matches, the line may hold the
   * agent's own text and is kept whole; otherwise its long strings (tool output) are cut as it comes.
   */
  readonly agentTextHead: RegExp
  /** True when the event holds the agent's own text: a long line with it is decoded from its whole text. */
  readonly isAgentText: (event: E) => boolean
  readonly onEvent: (out: HarnessEvents, event: E) => void
  /** A stderr line, its `\r` dropped; by default shown unless blank. */
  readonly onStderr?: (out: HarnessEvents, text: string) => void
  /** The run ended: every line is read; `Exited` follows what this adds. */
  readonly onExit?: (out: HarnessEvents, exited: Extract<HarnessEvent, { _tag: "Exited" }>) => void
  /** How a line spool writes about the output (a plain stdout line, a dropped one) is shown; `showLine` by default. */
  readonly show?: (out: HarnessEvents, text: string) => void
  /** The longest line kept (bytes); longer ones are only in the log. */
  readonly maxLineLength?: number
}

/** Turns the raw output of one run of a JSON-lines agent into spool's harness events. */
export interface JsonOutput {
  /** Takes one event of `runProcess` and returns it followed by what it means. */
  readonly feed: (event: HarnessEvent) => HarnessEvents
}

/**
 * The reading every JSON harness shares:
 * - every raw chunk is passed on as `Output` first, then what its completed lines mean
 * - stdout and stderr are split into lines in bounded memory; a long stdout line is compacted as
 *   it comes unless it may hold the agent's own text (`agentTextHead`, `isAgentText`)
 * - a decoded event goes to `onEvent`; a stdout line that is not JSON is shown as it is; a JSON
 *   line of an unknown type is skipped; a line longer than `maxLineLength` is only in the log
 * - at exit, the unterminated last lines are read, then `onExit`, then `Exited`
 */
export const makeJsonOutput = <E>(reader: JsonReader<E>): JsonOutput => {
  const maxLineLength = reader.maxLineLength ?? MAX_LINE_LENGTH
  const head = reader.agentTextHead
  const mayBeAgentText = (start: string) => !start.trimStart().startsWith("{") || head.test(start)
  const lines = {
    stdout: makeLineBuffer(maxLineLength, LONG_LINE, { wholeIf: mayBeAgentText }),
    stderr: makeLineBuffer(maxLineLength)
  }
  const show = reader.show ?? showLine
  const onStderr = reader.onStderr ?? ((out: HarnessEvents, text: string) => text.trim() === "" ? undefined : show(out, text))
  const needsWhole = (decoded: DecodedLine<E>) =>
    decoded._tag === "Plain" || (decoded._tag === "Event" && reader.isAgentText(decoded.event))

  const onLine = (out: HarnessEvents, stream: "stdout" | "stderr", line: BufferedLine): void => {
    if (line._tag === "TooLong") {
      return show(out, `(${reader.agent} printed a ${line.length}-byte line on ${stream}; it is only in the log)`)
    }
    if (stream === "stderr") return onStderr(out, textOfLine(line))
    const decoded = readKeptLine(line, reader.decodeLine, needsWhole)
    if (decoded._tag === "Event") return reader.onEvent(out, decoded.event)
    if (decoded._tag === "Plain" && decoded.text.trim() !== "") return show(out, decoded.text)
  }

  return {
    feed: (event) => {
      const out: HarnessEvents = []
      if (event._tag === "Output") {
        out.push(event)
        for (const line of lines[event.stream].push(event.bytes)) onLine(out, event.stream, line)
      } else if (event._tag === "Exited") {
        for (const line of lines.stdout.flush()) onLine(out, "stdout", line)
        for (const line of lines.stderr.flush()) onLine(out, "stderr", line)
        reader.onExit?.(out, event)
        out.push(event)
      } else {
        out.push(event)
      }
      return out
    }
  }
}
