import { HarnessEvent } from "./HarnessService.js"

/** A harness's reader of one run's output: each raw event in, the events it means out. */
export interface OutputReader {
  readonly feed: (event: HarnessEvent) => Array<HarnessEvent>
}

/** How the iteration log marks a line the agent wrote on stderr. */
const STDERR_MARK = "[stderr] "

/**
 * The output part of an iteration log as the terminal showed it while the agent ran: each line is
 * read again by the harness's own `reader`, so a JSON agent's events become the lines it showed.
 * `text` starts at a line's start; its unterminated last line is left out (the agent is still
 * writing it). The log holds raw output: this is only what a person reads.
 */
export const viewOfLog = (reader: OutputReader, text: string): string => {
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  const shown: Array<string> = []
  const lines = text.split("\n")
  for (const line of lines.slice(0, -1)) {
    const stderr = line.startsWith(STDERR_MARK)
    const bytes = encoder.encode(`${stderr ? line.slice(STDERR_MARK.length) : line}\n`)
    for (const event of reader.feed(HarnessEvent.Output({ stream: stderr ? "stderr" : "stdout", bytes, plain: false }))) {
      if (event._tag === "Display") shown.push(event.text)
      else if (event._tag === "Output" && event.plain) shown.push(decoder.decode(event.bytes))
    }
  }
  return shown.join("")
}
