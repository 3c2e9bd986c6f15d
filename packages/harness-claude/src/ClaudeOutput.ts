import { type BufferedLine, HarnessEvent, type HarnessUsage, LONG_LINE, makeLineBuffer, MAX_LINE_LENGTH, readKeptLine, textOfLine } from "@spool/core"
import { type ClaudeEvent, contentBlocks, decodeLine, type Result, textOf } from "./ClaudeEvent.js"
import * as ClaudeLimit from "./ClaudeLimit.js"

export interface ClaudeOutputOptions {
  /** The agent's working directory: file paths under it are shown relative to it. */
  readonly cwd: string
  readonly maxLineLength?: number
  /** The clock limit messages with a wall-clock reset time are read against. */
  readonly now?: () => number
}

/** Turns the raw output of one `claude -p --output-format stream-json` into spool's harness events. */
export interface ClaudeOutput {
  /** Takes one event of `runProcess` and returns it followed by what it means. */
  readonly feed: (event: HarnessEvent) => Array<HarnessEvent>
}

export const permissionWarning = (detail: string) =>
  `claude denied a tool call that needs permission (${detail}), so the agent could not do it; ` +
  `rerun with --allow-all to approve the agent's tool calls without asking`

export const NO_RESULT = "claude ended without a result"

const ROOT_REFUSAL = /cannot be used with root\/sudo privileges/
export const rootHint = "claude refuses --dangerously-skip-permissions as root; " +
  "set IS_SANDBOX=1 if this machine is a sandbox, or run as a non-root user"

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g

const oneLine = (text: string, max = 160) => {
  const first = text.trim().split("\n", 1)[0] ?? ""
  return first.length > max ? `${first.slice(0, max - 1)}…` : first
}

const withNewline = (text: string) => text.endsWith("\n") ? text : `${text}\n`

/** Totals of the whole run. Anthropic counts thinking within the output tokens; spool keeps them apart. */
export const toUsage = (result: Result): HarnessUsage => {
  const usage = result.usage
  const thinking = usage?.output_tokens_details?.thinking_tokens ?? 0
  return {
    inputTokens: usage?.input_tokens ?? 0,
    outputTokens: Math.max(0, (usage?.output_tokens ?? 0) - thinking),
    reasoningTokens: thinking,
    cacheReadTokens: usage?.cache_read_input_tokens ?? 0,
    cacheWriteTokens: usage?.cache_creation_input_tokens ?? 0,
    cost: result.total_cost_usd ?? null
  }
}

/**
 * A long stdout line that may be the agent's own text (or is not a JSON event at all) is read
 * whole; any other is compacted as it comes (its long strings, tool output, are cut).
 */
const mayBeAgentText = (head: string) => !head.trimStart().startsWith("{") || /"type"\s*:\s*"assistant"/.test(head)

/**
 * Mapping, per run:
 * - every raw chunk is passed on as `Output` first
 * - top-level assistant text: `AgentText` and `Display`, each message ending with a newline; a
 *   sub-agent's text, tool input and tool results are never `AgentText`
 * - a tool call: one `Display` line (`→ Write src/a.ts`; a sub-agent's indented); a failed one `✗ ...`
 * - a denied permission (`permission_denied`, or the result's `permission_denials`): one `Warning`
 * - `result`: one `Usage` with the run's totals; its text is never `AgentText` (it repeats the last
 *   message); when `is_error`, `Failed` with the API error text, and `Limited` if it is a limit
 * - a rejected `rate_limit_event`: `Limited`
 * - no `result` before the process exits: `Failed`
 * - `api_retry`, non-JSON stdout lines and stderr lines: `Display`
 */
export const makeClaudeOutput = (options: ClaudeOutputOptions): ClaudeOutput => {
  const maxLineLength = options.maxLineLength ?? MAX_LINE_LENGTH
  const now = options.now ?? Date.now
  const lines = { stdout: makeLineBuffer(maxLineLength, LONG_LINE, { wholeIf: mayBeAgentText }), stderr: makeLineBuffer(maxLineLength) }
  const calls = new Map<string, string>()
  const denied = new Set<string>()
  let warned = false
  let sawResult = false
  let apiError: string | null = null
  let limitResetAt: number | null = null
  let lastStderr = ""

  const relative = (file: string) => file.startsWith(`${options.cwd}/`) ? file.slice(options.cwd.length + 1) : file

  const show = (out: Array<HarnessEvent>, text: string) => out.push(HarnessEvent.Display({ text: withNewline(text) }))

  const warnPermission = (out: Array<HarnessEvent>, detail: string) => {
    if (warned) return
    warned = true
    out.push(HarnessEvent.Warning({ message: permissionWarning(detail) }))
  }

  const describeCall = (name: string, input: unknown) => {
    const record = typeof input === "object" && input !== null ? input as Record<string, unknown> : {}
    for (const key of ["file_path", "notebook_path", "path", "command", "pattern", "url", "description"]) {
      const value = record[key]
      if (typeof value === "string" && value !== "") return `${name} ${oneLine(relative(value), 120)}`
    }
    return name
  }

  const onAssistant = (out: Array<HarnessEvent>, event: Extract<ClaudeEvent, { type: "assistant" }>) => {
    const topLevel = event.parent_tool_use_id === null
    const indent = topLevel ? "" : "  "
    for (const block of contentBlocks(event.message.content)) {
      if (block.type === "text") {
        if (block.text.trim() === "") continue
        if (event.is_api_error_message) {
          if (topLevel) apiError = block.text.trim()
          show(out, `${indent}✗ ${oneLine(block.text, 500)}`)
        } else if (topLevel) {
          out.push(HarnessEvent.AgentText({ text: withNewline(block.text) }))
          show(out, block.text)
        }
      } else if (block.type === "tool_use") {
        const call = describeCall(block.name, block.input)
        calls.set(block.id, call)
        show(out, `${indent}→ ${call}`)
      }
    }
  }

  const onToolResults = (out: Array<HarnessEvent>, event: Extract<ClaudeEvent, { type: "user" }>) => {
    const indent = event.parent_tool_use_id === null ? "" : "  "
    for (const block of contentBlocks(event.message.content)) {
      if (block.type !== "tool_result" || !block.is_error || denied.has(block.tool_use_id)) continue
      show(out, `${indent}✗ ${calls.get(block.tool_use_id) ?? "tool call"}: ${oneLine(textOf(block.content)) || "failed"}`)
    }
  }

  const onResult = (out: Array<HarnessEvent>, result: Result) => {
    sawResult = true
    out.push(HarnessEvent.Usage({ usage: toUsage(result) }))
    const denial = result.permission_denials[0]
    if (denial !== undefined) warnPermission(out, describeCall(denial.tool_name, denial.tool_input))
    if (!result.is_error) return
    const message = oneLine(result.result ?? "", 500) || (apiError === null ? "" : oneLine(apiError, 500)) ||
      oneLine((result.errors ?? []).join("; "), 500) || `claude reported an error (${result.subtype})`
    out.push(HarnessEvent.Failed({ message }))
    if (apiError === null) show(out, `✗ ${message}`)
    const limit = ClaudeLimit.fromError(message, result.api_error_status ?? null, now())
    if (limit !== null) {
      out.push(HarnessEvent.Limited({ ...limit, resetAt: limit.resetAt ?? limitResetAt, retryAfterMs: null }))
    }
  }

  const onEvent = (out: Array<HarnessEvent>, event: ClaudeEvent) => {
    switch (event.type) {
      case "assistant":
        return onAssistant(out, event)
      case "user":
        return onToolResults(out, event)
      case "system":
        if (event.subtype === "permission_denied") {
          const call = (event.tool_use_id !== undefined ? calls.get(event.tool_use_id) : undefined) ?? event.tool_name ?? "a tool"
          if (event.tool_use_id !== undefined) denied.add(event.tool_use_id)
          show(out, `✗ ${call}: permission denied`)
          return warnPermission(out, call)
        }
        return show(
          out,
          `… claude retries a failed model request (${event.error_status ?? event.error ?? "error"}` +
            `${event.attempt === undefined ? "" : `, attempt ${event.attempt}${event.max_retries === undefined ? "" : `/${event.max_retries}`}`})`
        )
      case "rate_limit_event": {
        const limit = ClaudeLimit.fromRateLimitEvent(event)
        if (limit === null) return
        limitResetAt = limit.resetAt ?? limitResetAt
        show(out, `✗ ${limit.message}`)
        return void out.push(HarnessEvent.Limited({ ...limit, retryAfterMs: null }))
      }
      case "result":
        return onResult(out, event)
    }
  }

  /** A long line is read from its compact text unless it holds the agent's own text. */
  const needsWhole = (d: ReturnType<typeof decodeLine>) => d._tag === "Plain" || (d._tag === "Event" && d.event.type === "assistant")

  const onLine = (out: Array<HarnessEvent>, stream: "stdout" | "stderr", line: BufferedLine): unknown => {
    if (line._tag === "TooLong") {
      return show(out, `(claude printed a ${line.length}-byte line on ${stream}; it is only in the log)`)
    }
    if (stream === "stderr") {
      const text = textOfLine(line)
      const plain = text.replace(ANSI, "").trim()
      if (plain === "") return
      lastStderr = plain
      return show(out, plain)
    }
    const decoded = readKeptLine(line, decodeLine, needsWhole)
    if (decoded._tag === "Event") return onEvent(out, decoded.event)
    if (decoded._tag === "Plain" && decoded.text.trim() !== "") return show(out, decoded.text)
  }

  const noResult = () => {
    if (lastStderr === "") return NO_RESULT
    return `${NO_RESULT}: ${oneLine(lastStderr, 300)}${ROOT_REFUSAL.test(lastStderr) ? ` (${rootHint})` : ""}`
  }

  return {
    feed: (event) => {
      const out: Array<HarnessEvent> = []
      if (event._tag === "Output") {
        out.push(event)
        for (const line of lines[event.stream].push(event.bytes)) onLine(out, event.stream, line)
      } else if (event._tag === "Exited") {
        for (const line of lines.stdout.flush()) onLine(out, "stdout", line)
        for (const line of lines.stderr.flush()) onLine(out, "stderr", line)
        if (!sawResult) out.push(HarnessEvent.Failed({ message: noResult() }))
        out.push(event)
      } else {
        out.push(event)
      }
      return out
    }
  }
}
