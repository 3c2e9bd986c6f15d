import { firstLine, HarnessEvent, type HarnessEvents, type HarnessUsage, type JsonOutput, makeJsonOutput, showLine } from "@spool/core"
import { type CodexEvent, decodeLine, errorMessage } from "./CodexEvent.js"
import { parseLimit } from "./CodexLimit.js"

export interface CodexOutputOptions {
  /** The agent's working directory: file paths under it are shown relative to it. */
  readonly cwd: string
  readonly maxLineLength?: number
  /** The clock for usage-limit times (`try again at 3:51 PM`): the loop's `Clock`. */
  readonly now: () => number
}

/** Turns the raw output of one `codex exec --json` into spool's harness events. */
export type CodexOutput = JsonOutput

export const incompleteTurn = "codex ended without completing its turn"

/**
 * `/bin/bash -c "printf 'hi\\n' > a"` or `bash -lc 'npm test'` -> the script itself; also when its
 * closing quote was cut off (a long command in an event line read from its compact text).
 */
export const shownCommand = (command: string): string => {
  const wrapped = /^(?:\/\S*\/)?(?:ba|z)?sh -l?c (.*)$/s.exec(command)
  if (wrapped === null) return command
  const script = wrapped[1]!
  const single = /^'([^']*)'?$/s.exec(script)
  if (single !== null) return single[1]!
  const double = /^"((?:[^"\\]|\\.)*)"?$/s.exec(script)
  if (double !== null) return double[1]!.replace(/\\([\\"$`])/g, "$1")
  return script
}

/*
 * codex reports OpenAI's counts: `input_tokens` includes the cached ones (`cached_input_tokens`)
 * and `output_tokens` includes the reasoning ones. spool's fields are disjoint, as opencode
 * reports them, so the cached and reasoning tokens are taken out of input and output.
 */
const toUsage = (usage: Extract<CodexEvent, { type: "turn.completed" }>["usage"]): HarnessUsage => ({
  inputTokens: Math.max(0, usage.input_tokens - usage.cached_input_tokens),
  outputTokens: Math.max(0, usage.output_tokens - usage.reasoning_output_tokens),
  reasoningTokens: usage.reasoning_output_tokens,
  cacheReadTokens: usage.cached_input_tokens,
  cacheWriteTokens: usage.cache_write_input_tokens,
  cost: null
})

/**
 * Mapping, per run:
 * - every raw chunk is passed on as `Output` first
 * - a finished `agent_message`: `AgentText` and `Display`, ending with a newline
 * - a finished command: one `Display` line with its exit code; a finished patch: one line per file
 * - `turn.completed`: one `Usage` for the turn (codex reports no cost: null)
 * - `turn.failed`: `Failed` with the API's own message; a process that exits without
 *   `turn.completed` or `turn.failed`: `Failed` too
 * - a usage limit in `turn.failed` or an `error` event: one `Limited` per run
 * - `error` events and items, non-JSON stdout lines and stderr lines: `Display`
 */
export const makeCodexOutput = (options: CodexOutputOptions): CodexOutput => {
  const { now } = options
  let turnEnded = false
  let limited = false
  let lastError: string | null = null
  let stderrError: string | null = null

  const relative = (file: string) => file.startsWith(`${options.cwd}/`) ? file.slice(options.cwd.length + 1) : file

  const checkLimit = (out: HarnessEvents, message: string) => {
    if (limited) return
    const limit = parseLimit(message, now())
    if (limit === null) return
    limited = true
    out.push(HarnessEvent.Limited(limit))
  }

  const onEvent = (out: HarnessEvents, event: CodexEvent) => {
    switch (event.type) {
      case "item.completed": {
        const item = event.item
        switch (item.type) {
          case "agent_message": {
            if (item.text === "") return
            const text = item.text.endsWith("\n") ? item.text : `${item.text}\n`
            out.push(HarnessEvent.AgentText({ text }))
            return void out.push(HarnessEvent.Display({ text }))
          }
          case "command_execution": {
            const exit = item.exit_code === null ? item.status : `exit ${item.exit_code}`
            const mark = item.status === "completed" && (item.exit_code ?? 0) === 0 ? "→" : "✗"
            return showLine(out, `${mark} $ ${firstLine(shownCommand(item.command), 120)} (${exit})`)
          }
          case "file_change": {
            const mark = item.status === "completed" ? "→" : "✗"
            for (const change of item.changes) showLine(out, `${mark} ${change.kind} ${relative(change.path)}`)
            return
          }
          case "error":
            return showLine(out, `! codex: ${firstLine(item.message, 500)}`)
        }
        return
      }
      case "turn.completed":
        turnEnded = true
        return void out.push(HarnessEvent.Usage({ usage: toUsage(event.usage) }))
      case "turn.failed": {
        turnEnded = true
        const message = errorMessage(event.error.message)
        if (event.error.message !== lastError) showLine(out, `✗ codex error: ${firstLine(message, 500)}`)
        checkLimit(out, message)
        return void out.push(HarnessEvent.Failed({ message }))
      }
      case "error": {
        lastError = event.message
        const message = errorMessage(event.message)
        showLine(out, `✗ codex error: ${firstLine(message, 500)}`)
        return checkLimit(out, message)
      }
    }
  }

  const onStderr = (out: HarnessEvents, text: string) => {
    if (stderrError === null && /^Error:/.test(text)) stderrError = firstLine(text, 500)
    if (text.trim() !== "") showLine(out, text)
  }

  const onExit = (out: HarnessEvents, event: Extract<HarnessEvent, { _tag: "Exited" }>) => {
    if (turnEnded) return
    const how = event.signal !== null ? ` (${event.signal})` : event.exitCode !== null ? ` (exit code ${event.exitCode})` : ""
    out.push(HarnessEvent.Failed({ message: `${incompleteTurn}${how}${stderrError === null ? "" : `: ${stderrError}`}` }))
  }

  return makeJsonOutput({
    agent: "codex",
    decodeLine,
    // A long line holding the agent's own text is read whole; others have their long strings (tool output) cut.
    agentTextHead: /"agent_message"/,
    isAgentText: (event) => event.type === "item.completed" && event.item.type === "agent_message",
    onEvent,
    onStderr,
    onExit,
    ...(options.maxLineLength === undefined ? {} : { maxLineLength: options.maxLineLength })
  })
}
