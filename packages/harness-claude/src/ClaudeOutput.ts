import { firstLine, HarnessEvent, type HarnessEvents, type HarnessUsage, type JsonOutput, makeJsonOutput, showLine as show, stripAnsi } from "@spool/core"
import { type ClaudeEvent, contentBlocks, decodeLine, type Result, textOf } from "./ClaudeEvent.js"
import * as ClaudeLimit from "./ClaudeLimit.js"

export interface ClaudeOutputOptions {
  /** The agent's working directory: file paths under it are shown relative to it. */
  readonly cwd: string
  readonly maxLineLength?: number
  /** The clock limit messages with a wall-clock reset time are read against (the loop's `Clock`). */
  readonly now: () => number
}

/** Turns the raw output of one `claude -p --output-format stream-json` into spool's harness events. */
export type ClaudeOutput = JsonOutput

export const permissionWarning = (detail: string) =>
  `claude denied a tool call that needs permission (${detail}), so the agent could not do it; ` +
  `rerun with --allow-all to approve the agent's tool calls without asking`

export const NO_RESULT = "claude ended without a result"

const ROOT_REFUSAL = /cannot be used with root\/sudo privileges/
export const rootHint = "claude refuses --dangerously-skip-permissions as root; " +
  "set IS_SANDBOX=1 if this machine is a sandbox, or run as a non-root user"

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
  const { now } = options
  const calls = new Map<string, string>()
  const denied = new Set<string>()
  let warned = false
  let sawResult = false
  let apiError: string | null = null
  let limitResetAt: number | null = null
  let lastStderr = ""

  const relative = (file: string) => file.startsWith(`${options.cwd}/`) ? file.slice(options.cwd.length + 1) : file

  const warnPermission = (out: HarnessEvents, detail: string) => {
    if (warned) return
    warned = true
    out.push(HarnessEvent.Warning({ message: permissionWarning(detail) }))
  }

  const describeCall = (name: string, input: unknown) => {
    const record = typeof input === "object" && input !== null ? input as Record<string, unknown> : {}
    for (const key of ["file_path", "notebook_path", "path", "command", "pattern", "url", "description"]) {
      const value = record[key]
      if (typeof value === "string" && value !== "") return `${name} ${firstLine(relative(value), 120)}`
    }
    return name
  }

  const onAssistant = (out: HarnessEvents, event: Extract<ClaudeEvent, { type: "assistant" }>) => {
    const topLevel = event.parent_tool_use_id === null
    const indent = topLevel ? "" : "  "
    for (const block of contentBlocks(event.message.content)) {
      if (block.type === "text") {
        if (block.text.trim() === "") continue
        if (event.is_api_error_message) {
          if (topLevel) apiError = block.text
          show(out, `${indent}✗ ${firstLine(block.text, 500)}`)
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

  const onToolResults = (out: HarnessEvents, event: Extract<ClaudeEvent, { type: "user" }>) => {
    const indent = event.parent_tool_use_id === null ? "" : "  "
    for (const block of contentBlocks(event.message.content)) {
      if (block.type !== "tool_result" || !block.is_error || denied.has(block.tool_use_id)) continue
      show(out, `${indent}✗ ${calls.get(block.tool_use_id) ?? "tool call"}: ${firstLine(textOf(block.content)) || "failed"}`)
    }
  }

  const onResult = (out: HarnessEvents, result: Result) => {
    sawResult = true
    out.push(HarnessEvent.Usage({ usage: toUsage(result) }))
    const denial = result.permission_denials[0]
    if (denial !== undefined) warnPermission(out, describeCall(denial.tool_name, denial.tool_input))
    if (!result.is_error) return
    const message = firstLine(result.result ?? "", 500) || (apiError === null ? "" : firstLine(apiError, 500)) ||
      firstLine((result.errors ?? []).join("; "), 500) || `claude reported an error (${result.subtype})`
    out.push(HarnessEvent.Failed({ message }))
    if (apiError === null) show(out, `✗ ${message}`)
    const limit = ClaudeLimit.fromError(message, result.api_error_status ?? null, now())
    if (limit !== null) {
      out.push(HarnessEvent.Limited({ ...limit, resetAt: ClaudeLimit.runReset(limit.resetAt, limitResetAt), retryAfterMs: null }))
    }
  }

  const onEvent = (out: HarnessEvents, event: ClaudeEvent) => {
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

  const noResult = () => {
    if (lastStderr === "") return NO_RESULT
    return `${NO_RESULT}: ${firstLine(lastStderr, 300)}${ROOT_REFUSAL.test(lastStderr) ? ` (${rootHint})` : ""}`
  }

  const onStderr = (out: HarnessEvents, text: string) => {
    const plain = stripAnsi(text).trim()
    if (plain === "") return
    lastStderr = plain
    show(out, plain)
  }

  return makeJsonOutput({
    agent: "claude",
    decodeLine,
    // A long line holding the agent's own text is read whole; others have their long strings (tool output) cut.
    agentTextHead: /"type"\s*:\s*"assistant"/,
    isAgentText: (event) => event.type === "assistant",
    onEvent,
    onStderr,
    onExit: (out) => {
      if (!sawResult) out.push(HarnessEvent.Failed({ message: noResult() }))
    },
    ...(options.maxLineLength === undefined ? {} : { maxLineLength: options.maxLineLength })
  })
}
