import { firstLine, HarnessEvent, type HarnessEvents, type HarnessUsage, type JsonOutput, makeJsonOutput, showLine, stripAnsi } from "@spool/core"
import { decodeLine, type MessageEnd, type PiEvent, textOf } from "./PiEvent.js"
import * as PiLimit from "./PiLimit.js"

export interface PiOutputOptions {
  /** The agent's working directory: file paths under it are shown relative to it. */
  readonly cwd: string
  readonly maxLineLength?: number
}

/** Turns the raw output of one `pi -p --mode json` into spool's harness events. */
export type PiOutput = JsonOutput

export const NO_END = "pi ended without finishing its run"

type Usage = NonNullable<MessageEnd["message"]["usage"]>

/** One model request's tokens and cost, as pi counts them (its `input` excludes the cached tokens). */
export const toUsage = (usage: Usage): HarnessUsage => ({
  inputTokens: usage.input,
  outputTokens: usage.output,
  reasoningTokens: 0,
  cacheReadTokens: usage.cacheRead,
  cacheWriteTokens: usage.cacheWrite,
  cost: usage.cost.total
})

/**
 * Mapping, per run:
 * - every raw chunk is passed on as `Output` first; streamed updates (each repeating the whole
 *   message so far) are skipped unread
 * - a finished message of the model: its text blocks (never thinking or tool calls) as `AgentText`
 *   and `Display`, ending with a newline; one `Usage` per model request, with its cost
 * - a tool call: one `Display` line (`→ write src/a.ts`); a failed one `✗ ...: error`
 * - a failed model request (`stopReason: error`): shown; if the run ends on it (pi exits 0 all the
 *   same), `Failed` with the provider's message, and `Limited` for a 429 / rate limit / quota
 * - `auto_retry_start`: one `Display` line; no `agent_end` before the process exits: `Failed`
 * - non-JSON stdout lines and stderr lines: `Display`
 */
export const makePiOutput = (options: PiOutputOptions): PiOutput => {
  const calls = new Map<string, string>()
  let ended = false
  let lastError: string | null = null
  let lastStderr = ""

  const relative = (file: string) => file.startsWith(`${options.cwd}/`) ? file.slice(options.cwd.length + 1) : file

  const describeCall = (name: string, args: unknown) => {
    const record = typeof args === "object" && args !== null ? args as Record<string, unknown> : {}
    for (const key of ["path", "file_path", "command", "pattern", "url"]) {
      const value = record[key]
      if (typeof value === "string" && value !== "") return `${name} ${firstLine(relative(value), 120)}`
    }
    return name
  }

  const onMessage = (out: HarnessEvents, message: MessageEnd["message"]) => {
    if (message.role !== "assistant") return
    if (message.usage !== undefined) out.push(HarnessEvent.Usage({ usage: toUsage(message.usage) }))
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      lastError = firstLine(message.errorMessage ?? "", 500) || `the model request ended with ${message.stopReason}`
      return showLine(out, `✗ pi: ${lastError}`)
    }
    lastError = null
    const text = textOf(message.content)
    if (text.trim() === "") return
    const line = text.endsWith("\n") ? text : `${text}\n`
    out.push(HarnessEvent.AgentText({ text: line }), HarnessEvent.Display({ text: line }))
  }

  const onEvent = (out: HarnessEvents, event: PiEvent) => {
    switch (event.type) {
      case "message_end":
        return onMessage(out, event.message)
      case "tool_execution_start": {
        const call = describeCall(event.toolName, event.args)
        calls.set(event.toolCallId, call)
        return showLine(out, `→ ${call}`)
      }
      case "tool_execution_end": {
        if (!event.isError) return
        const detail = firstLine(textOf(event.result?.content ?? [])) || "failed"
        return showLine(out, `✗ ${calls.get(event.toolCallId) ?? event.toolName}: ${detail}`)
      }
      case "agent_end":
        ended = true
        return
      case "auto_retry_start":
        ended = false
        return showLine(out, `… pi retries a failed model request (attempt ${event.attempt}/${event.maxAttempts}): ${firstLine(event.errorMessage, 300)}`)
      case "auto_retry_end":
        if (!event.success && event.finalError !== undefined) lastError = firstLine(event.finalError, 500)
        return
    }
  }

  const onStderr = (out: HarnessEvents, text: string) => {
    const plain = stripAnsi(text).trim()
    if (plain === "") return
    lastStderr = plain
    showLine(out, plain)
  }

  const onExit = (out: HarnessEvents) => {
    if (lastError !== null) {
      out.push(HarnessEvent.Failed({ message: lastError }))
      const limit = PiLimit.fromError(lastError)
      if (limit !== null) out.push(HarnessEvent.Limited(limit))
    } else if (!ended) {
      out.push(HarnessEvent.Failed({ message: lastStderr === "" ? NO_END : `${NO_END}: ${firstLine(lastStderr, 300)}` }))
    }
  }

  return makeJsonOutput({
    agent: "pi",
    decodeLine,
    // A long finished message is read whole (it may be the model's text); others have their long strings cut.
    agentTextHead: /^\s*\{\s*"type"\s*:\s*"message_end"/,
    isAgentText: (event) => event.type === "message_end",
    onEvent,
    onStderr,
    onExit,
    ...(options.maxLineLength === undefined ? {} : { maxLineLength: options.maxLineLength })
  })
}
