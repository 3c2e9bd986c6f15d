import { firstLine, HarnessEvent, type HarnessEvents, type HarnessUsage, type JsonOutput, makeJsonOutput, showLine, stripAnsi } from "@spool/core"
import { apiErrorOf, decodeLine, type GeminiEvent, type Result } from "./GeminiEvent.js"
import * as GeminiLimit from "./GeminiLimit.js"

export interface GeminiOutputOptions {
  /** The agent's working directory: file paths under it are shown relative to it. */
  readonly cwd: string
  readonly maxLineLength?: number
}

/** Turns the raw output of one `gemini --output-format stream-json` into spool's harness events. */
export type GeminiOutput = JsonOutput

export const NO_RESULT = "gemini ended without a result"

export const deniedWarning = (detail: string) =>
  `gemini did not run a tool call that needs approval (${detail}): without approval it offers the model only ` +
  `the tools that need none, so the agent could not do it; rerun with --allow-all to approve the agent's tool calls`

export const untrustedWarning =
  `gemini does not trust this folder and turned --allow-all (--yolo) back into asking for approval; ` +
  `trust the folder in gemini, or set GEMINI_CLI_TRUST_WORKSPACE=true`

/** Tool calls spool could not run for want of approval: the tool was not offered, or a policy denied it. */
const DENIED = new Set(["tool_not_registered", "policy_violation"])
const YOLO_OVERRIDDEN = /Approval mode overridden to "default" because the current folder is not trusted/
const STACK_FRAME = /^\s+at \S|^\s*[{}]\s*$|^\s+status: \d+\s*$/
/** gemini's notice about the terminal it thinks it draws on: its output goes to spool, not to a terminal. */
const TERMINAL_NOTICE = /^Warning: 256-color support not detected/

/**
 * Totals of the run over every model it used. Gemini's `input_tokens` include the cached ones;
 * spool's fields are disjoint. What the total counts beyond input and output is thinking.
 */
export const toUsage = (stats: Result["stats"]): HarnessUsage => ({
  inputTokens: Math.max(0, stats.input_tokens - stats.cached),
  outputTokens: stats.output_tokens,
  reasoningTokens: Math.max(0, stats.total_tokens - stats.input_tokens - stats.output_tokens),
  cacheReadTokens: stats.cached,
  cacheWriteTokens: 0,
  cost: null
})

/** A failed result's message: the API's own words for an API error (without gemini's `[API Error: ...]` around them). */
export const failureMessage = (result: Result, lastError: string | null): string => {
  const raw = result.error?.message ?? ""
  const api = apiErrorOf(raw)
  const message = api === null
    ? firstLine(raw.replace(/^\[API Error: ([\s\S]*?)\](?=\n|$)/, "$1"), 500)
    : firstLine(`${api.message}${api.code === null ? "" : ` (HTTP ${api.code})`}`, 500)
  return message || lastError || `gemini reported an error (${result.error?.type ?? result.status})`
}

/**
 * Mapping, per run:
 * - every raw chunk is passed on as `Output` first
 * - the model's text (`message` with role `assistant`, streamed in pieces): `AgentText` and
 *   `Display`; a model turn after a tool call starts on a new line; the user's prompt is not shown
 * - a tool call: one `Display` line (`→ write_file a.txt`); a failed one `✗ ...: error`
 * - a call that needed approval (not offered, or denied by policy), or `--yolo` turned off in an
 *   untrusted folder: one `Warning` per run
 * - `result`: one `Usage` with the run's totals (gemini reports no cost: null); `status: error`:
 *   `Failed` with the API's message, and `Limited` for a 429 / `RESOURCE_EXHAUSTED` / quota
 * - no `result` before the process exits: `Failed` (with gemini's last stderr line)
 * - `error` events, non-JSON stdout lines and stderr lines (stack frames and the terminal notice
 *   excepted): `Display`
 */
export const makeGeminiOutput = (options: GeminiOutputOptions): GeminiOutput => {
  const calls = new Map<string, string>()
  let warned = false
  let sawResult = false
  // Whether the live view, and the model's text, end with a newline.
  let displayAtLineStart = true
  let textAtLineStart = true
  let lastError: string | null = null
  let lastStderr = ""
  let retryHint: number | null = null

  const relative = (file: string) => file.startsWith(`${options.cwd}/`) ? file.slice(options.cwd.length + 1) : file

  const warn = (out: HarnessEvents, message: string) => {
    if (warned) return
    warned = true
    out.push(HarnessEvent.Warning({ message }))
  }

  /** A line of spool's own in the live view, on a line of its own after the model's text. */
  const show = (out: HarnessEvents, text: string) => {
    showLine(out, displayAtLineStart ? text : `\n${text}`)
    displayAtLineStart = true
  }

  /** The model's message is over (a tool call or the end of the run follows): its text ends with a newline. */
  const endMessage = (out: HarnessEvents) => {
    if (!textAtLineStart) out.push(HarnessEvent.AgentText({ text: "\n" }))
    textAtLineStart = true
  }

  const describeCall = (name: string, parameters: unknown) => {
    const record = typeof parameters === "object" && parameters !== null ? parameters as Record<string, unknown> : {}
    for (const key of ["file_path", "absolute_path", "path", "dir_path", "command", "pattern", "url", "description"]) {
      const value = record[key]
      if (typeof value === "string" && value !== "") return `${name} ${firstLine(relative(value), 120)}`
    }
    return name
  }

  const onResult = (out: HarnessEvents, result: Result) => {
    sawResult = true
    out.push(HarnessEvent.Usage({ usage: toUsage(result.stats) }))
    if (result.status === "success") return
    const message = failureMessage(result, lastError)
    show(out, `✗ ${message}`)
    out.push(HarnessEvent.Failed({ message }))
    const limit = result.error === undefined ? null : GeminiLimit.fromError(result.error.message, retryHint)
    if (limit !== null) out.push(HarnessEvent.Limited(limit))
  }

  const onEvent = (out: HarnessEvents, event: GeminiEvent) => {
    switch (event.type) {
      case "message": {
        if (event.role !== "assistant" || event.content === "") return
        displayAtLineStart = textAtLineStart = event.content.endsWith("\n")
        out.push(HarnessEvent.AgentText({ text: event.content }))
        return void out.push(HarnessEvent.Display({ text: event.content }))
      }
      case "tool_use": {
        endMessage(out)
        const call = describeCall(event.tool_name, event.parameters)
        calls.set(event.tool_id, call)
        return show(out, `→ ${call}`)
      }
      case "tool_result": {
        if (event.status !== "error") return
        const call = calls.get(event.tool_id) ?? "tool call"
        show(out, `✗ ${call}: ${firstLine(event.error?.message ?? "failed")}`)
        if (DENIED.has(event.error?.type ?? "")) warn(out, deniedWarning(call))
        return
      }
      case "error":
        endMessage(out)
        lastError = firstLine(event.message, 500)
        return show(out, `${event.severity === "warning" ? "!" : "✗"} gemini: ${lastError}`)
      case "result":
        endMessage(out)
        return onResult(out, event)
    }
  }

  const onStderr = (out: HarnessEvents, text: string) => {
    const plain = stripAnsi(text)
    if (plain.trim() === "" || STACK_FRAME.test(plain) || TERMINAL_NOTICE.test(plain)) return
    if (YOLO_OVERRIDDEN.test(plain)) warn(out, untrustedWarning)
    const retrying = GeminiLimit.retryingAfterLimit(plain)
    if (retrying !== null || /^Suggested retry after/.test(plain)) retryHint = GeminiLimit.retryDelayOf(plain) ?? retryHint
    lastStderr = plain.trim()
    show(out, plain)
  }

  return makeJsonOutput({
    agent: "gemini",
    decodeLine,
    // A long line holding the model's text is read whole; others have their long strings (tool output) cut.
    agentTextHead: /"type"\s*:\s*"message"/,
    isAgentText: (event) => event.type === "message",
    onEvent,
    onStderr,
    onExit: (out) => {
      endMessage(out)
      if (sawResult) return
      const message = lastStderr === "" ? NO_RESULT : `${NO_RESULT}: ${firstLine(lastStderr, 300)}`
      out.push(HarnessEvent.Failed({ message }))
    },
    show,
    ...(options.maxLineLength === undefined ? {} : { maxLineLength: options.maxLineLength })
  })
}
