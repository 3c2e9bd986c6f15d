import { firstLine, HarnessEvent, type HarnessEvents, type HarnessUsage, type JsonOutput, makeJsonOutput, showLine as show, stripAnsi } from "@spool/core"
import { contentBlocks, decodeLine, type QwenEvent, type Result, textOf } from "./QwenEvent.js"
import * as QwenLimit from "./QwenLimit.js"

export interface QwenOutputOptions {
  /** The agent's working directory: file paths under it are shown relative to it. */
  readonly cwd: string
  readonly maxLineLength?: number
  /** The clock a reset time in a limit's message is read against (the loop's `Clock`). */
  readonly now: () => number
}

/** Turns the raw output of one `qwen -o stream-json` into spool's harness events. */
export type QwenOutput = JsonOutput

export const permissionWarning = (detail: string) =>
  `qwen denied a tool call that needs permission (${detail}), so the agent could not do it; ` +
  `rerun with --allow-all to approve the agent's tool calls without asking`

export const untrustedWarning = "qwen does not trust this folder, so it ran without --allow-all's approvals; " +
  "trust the folder in qwen (its trustedFolders.json), or turn its folder trust off"

export const NO_RESULT = "qwen ended without a result"

const UNTRUSTED = /^Approval mode overridden to "default" because the current folder is not trusted/

/**
 * qwen's own report of a failed model request, which it appends to the model's message as text:
 * `[API Error: ...]` (a rate limit's hint may follow it), `Quota exhausted: ...`, Qwen OAuth's end.
 */
const ERROR_TEXT = /^(?:\[API Error: [\s\S]*\](?:\n[^\n]*)?|Quota exhausted: [\s\S]*|Qwen OAuth (?:quota exceeded|free tier has been discontinued)[\s\S]*)$/

const withNewline = (text: string) => text.endsWith("\n") ? text : `${text}\n`

/** Totals of the whole run: qwen's input tokens count the cached ones, which spool keeps apart; no cost. */
export const toUsage = (result: Result): HarnessUsage => {
  const usage = result.usage
  const cached = usage?.cache_read_input_tokens ?? 0
  return {
    inputTokens: Math.max(0, (usage?.input_tokens ?? 0) - cached),
    outputTokens: usage?.output_tokens ?? 0,
    reasoningTokens: 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    cost: null
  }
}

/**
 * Mapping, per run:
 * - every raw chunk is passed on as `Output` first
 * - top-level model text: `AgentText` and `Display`, each message ending with a newline; a
 *   sub-agent's text, tool input and tool results are never `AgentText`; qwen's report of a failed
 *   model request in a message is shown `✗ ...`, never `AgentText`
 * - a tool call: one `Display` line (`→ write_file src/a.ts`; a sub-agent's indented); a failed one `✗ ...`
 * - `result`: one `Usage` with the run's totals; its text is never `AgentText` (it repeats the last
 *   message); its `permission_denials`: one `Warning`; when `is_error`, `Failed` with its error,
 *   and `Limited` if that is a limit
 * - stderr: shown; qwen waiting out or retrying a limit: `Limited`; an untrusted folder: `Warning`
 * - no `result` before the process exits: `Failed`
 */
export const makeQwenOutput = (options: QwenOutputOptions): QwenOutput => {
  const { now } = options
  const calls = new Map<string, string>()
  let sawResult = false
  let apiError: string | null = null
  let lastStderr = ""

  const relative = (file: string) => file.startsWith(`${options.cwd}/`) ? file.slice(options.cwd.length + 1) : file

  const describeCall = (name: string, input: unknown) => {
    // A string, number or boolean has none of these keys, so only a missing input or null needs a stand-in.
    const record = (input ?? {}) as Record<string, unknown>
    for (const key of ["file_path", "notebook_path", "path", "command", "pattern", "url", "query", "skill", "description"]) {
      const value = record[key]
      if (typeof value === "string" && value !== "") return `${name} ${firstLine(relative(value), 120)}`
    }
    return name
  }

  const onAssistant = (out: HarnessEvents, event: Extract<QwenEvent, { type: "assistant" }>) => {
    const topLevel = event.parent_tool_use_id === null
    const indent = topLevel ? "" : "  "
    for (const block of contentBlocks(event.message.content)) {
      if (block.type === "text") {
        const text = block.text.trim()
        if (text === "") continue
        if (ERROR_TEXT.test(text)) {
          if (topLevel) apiError = text
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

  const onToolResults = (out: HarnessEvents, event: Extract<QwenEvent, { type: "user" }>) => {
    const indent = event.parent_tool_use_id === null ? "" : "  "
    for (const block of contentBlocks(event.message.content)) {
      if (block.type !== "tool_result" || !block.is_error) continue
      show(out, `${indent}✗ ${calls.get(block.tool_use_id) ?? "tool call"}: ${firstLine(textOf(block.content)) || "failed"}`)
    }
  }

  const onResult = (out: HarnessEvents, result: Result) => {
    sawResult = true
    out.push(HarnessEvent.Usage({ usage: toUsage(result) }))
    const denial = result.permission_denials[0]
    if (denial !== undefined) out.push(HarnessEvent.Warning({ message: permissionWarning(describeCall(denial.tool_name, denial.tool_input)) }))
    if (!result.is_error) return
    const error = result.error?.message?.trim() || apiError || ""
    const message = firstLine(QwenLimit.apiWords(error), 500) || `qwen reported an error (${result.subtype})`
    out.push(HarnessEvent.Failed({ message }))
    if (apiError === null) show(out, `✗ ${message}`)
    const limit = QwenLimit.fromError(error, now())
    if (limit !== null) out.push(HarnessEvent.Limited(limit))
  }

  const onEvent = (out: HarnessEvents, event: QwenEvent) => {
    switch (event.type) {
      case "assistant":
        return onAssistant(out, event)
      case "user":
        return onToolResults(out, event)
      case "result":
        return onResult(out, event)
    }
  }

  const onStderr = (out: HarnessEvents, text: string) => {
    const plain = stripAnsi(text).trim()
    if (plain === "") return
    lastStderr = plain
    show(out, plain)
    const limit = QwenLimit.fromHeartbeat(plain) ?? QwenLimit.fromRetrying(plain)
    if (limit !== null) out.push(HarnessEvent.Limited(limit))
    else if (UNTRUSTED.test(plain)) out.push(HarnessEvent.Warning({ message: untrustedWarning }))
  }

  return makeJsonOutput({
    agent: "qwen",
    decodeLine,
    // A long line holding the agent's own text is read whole; others have their long strings (tool output) cut.
    agentTextHead: /^\s*\{\s*"type"\s*:\s*"assistant"/,
    isAgentText: (event) => event.type === "assistant",
    onEvent,
    onStderr,
    onExit: (out) => {
      if (!sawResult) out.push(HarnessEvent.Failed({ message: lastStderr === "" ? NO_RESULT : `${NO_RESULT}: ${firstLine(lastStderr, 300)}` }))
    },
    ...(options.maxLineLength === undefined ? {} : { maxLineLength: options.maxLineLength })
  })
}
