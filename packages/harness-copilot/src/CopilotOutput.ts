import { firstLine, HarnessEvent, type HarnessEvents, type HarnessUsage, type JsonOutput, makeJsonOutput, showLine, stripAnsi } from "@spool/core"
import { type CopilotEvent, decodeLine, decodeUsageFile, isSubAgent, type Tokens } from "./CopilotEvent.js"
import * as CopilotLimit from "./CopilotLimit.js"

export interface CopilotOutputOptions {
  /** The agent's working directory: file paths under it are shown relative to it. */
  readonly cwd: string
  readonly maxLineLength?: number
}

/** Turns the raw output of one `copilot --output-format json` into spool's harness events; `report` reads its usage file. */
export interface CopilotOutput extends JsonOutput {
  readonly report: (text: string | null) => HarnessEvents
  /** The limit that ended the run, completed from copilot's log of it. */
  readonly limit: (limited: Limited, log: string | null) => Limited
}

type Limited = Extract<HarnessEvent, { _tag: "Limited" }>

export const NO_RESULT = "copilot ended without its result"

export const deniedWarning = (detail: string) =>
  `copilot denied a tool call that needs approval (${detail}): with no one to ask, it approves none, so the agent ` +
  `could not do it; rerun with --allow-all to approve the agent's tool calls`

/**
 * The run's tokens over every model it used. copilot's `inputTokens` include the cached and
 * cache-written ones, its `outputTokens` the reasoning ones; spool's fields are disjoint. copilot
 * reports no cost in money (premium requests or AI credits, or nothing for a model of one's own).
 */
export const toUsage = (models: ReadonlyArray<Tokens>): HarnessUsage => {
  const sum = (field: keyof Tokens) => models.reduce((total, model) => total + model[field], 0)
  return {
    inputTokens: Math.max(0, sum("inputTokens") - sum("cacheReadTokens") - sum("cacheWriteTokens")),
    outputTokens: Math.max(0, sum("outputTokens") - sum("reasoningTokens")),
    reasoningTokens: sum("reasoningTokens"),
    cacheReadTokens: sum("cacheReadTokens"),
    cacheWriteTokens: sum("cacheWriteTokens"),
    cost: null
  }
}

/**
 * Mapping, per run:
 * - every raw chunk is passed on as `Output` first; streamed deltas are skipped unread
 * - the main agent's finished message: `AgentText` and `Display`, ending with a newline; a
 *   sub-agent's text is never `AgentText`
 * - a tool call: one `Display` line (`→ create src/a.ts`; a sub-agent's indented); a failed one
 *   `✗ ...: error`, a shell command that exited non-zero `✗ ...: exit code N`; one denied for want
 *   of approval: one `Warning` per run
 * - a failed model request: shown; a 429 or 402 is `Limited` at once (copilot would go on retrying
 *   it for minutes); `session.error`: shown, `Limited` if it is a limit and none was read yet,
 *   and `Failed` with its message at exit
 * - no `result` before the process exits: `Failed` (with copilot's last stderr line)
 * - the usage file, once copilot has exited: one `Usage` with the run's tokens (none when no model
 *   request succeeded)
 * - the limit that ends the run, once copilot has stopped: completed with the retry-after of its log
 * - retries, warnings, non-JSON stdout lines and stderr lines: `Display`
 */
export const makeCopilotOutput = (options: CopilotOutputOptions): CopilotOutput => {
  const calls = new Map<string, string>()
  let warned = false
  let limited = false
  let sawResult = false
  let lastError: string | null = null
  let lastStderr = ""

  const relative = (file: string) => file.startsWith(`${options.cwd}/`) ? file.slice(options.cwd.length + 1) : file

  const describeCall = (name: string, args: unknown) => {
    // null as no arguments; a string, number or boolean has none of the keys read either.
    const record = (args ?? {}) as Record<string, unknown>
    for (const key of ["path", "file_path", "command", "pattern", "url", "query", "description"]) {
      const value = record[key]
      if (typeof value === "string" && value !== "") return `${name} ${firstLine(relative(value), 120)}`
    }
    return name
  }

  const limit = (out: HarnessEvents, found: CopilotLimit.CopilotLimit | null) => {
    if (found === null || limited) return
    limited = true
    out.push(HarnessEvent.Limited(found))
  }

  const onToolComplete = (out: HarnessEvents, event: Extract<CopilotEvent, { type: "tool.execution_complete" }>) => {
    const { data } = event
    const call = `${isSubAgent(event) ? "  " : ""}✗ ${calls.get(data.toolCallId) ?? "tool call"}`
    if (!data.success) {
      showLine(out, `${call}: ${firstLine(data.error?.message ?? "") || "failed"}`)
      if (data.error?.code !== "denied" || warned) return
      warned = true
      return void out.push(HarnessEvent.Warning({ message: deniedWarning(calls.get(data.toolCallId) ?? "a tool call") }))
    }
    const exitCode = data.shellExecution?.exitCode
    if (exitCode !== undefined && exitCode !== 0) showLine(out, `${call}: exit code ${exitCode}`)
  }

  const onEvent = (out: HarnessEvents, event: CopilotEvent) => {
    switch (event.type) {
      case "assistant.message": {
        if (isSubAgent(event) || event.data.content.trim() === "") return
        const text = event.data.content.endsWith("\n") ? event.data.content : `${event.data.content}\n`
        return void out.push(HarnessEvent.AgentText({ text }), HarnessEvent.Display({ text }))
      }
      case "tool.execution_start": {
        const call = describeCall(event.data.toolName, event.data.arguments)
        calls.set(event.data.toolCallId, call)
        return showLine(out, `${isSubAgent(event) ? "  " : ""}→ ${call}`)
      }
      case "tool.execution_complete":
        return onToolComplete(out, event)
      case "model.call_failure": {
        const { statusCode, errorType, errorMessage } = event.data
        const found = CopilotLimit.fromFailure(statusCode, errorType, errorMessage)
        showLine(out, `! copilot: a model request failed: ${found?.message ?? firstLine(`${statusCode ?? ""} ${errorMessage}`, 300)}`)
        return limit(out, found)
      }
      case "assistant.turn_retry":
        return showLine(out, `… copilot retries the model request${event.data.reason === "" ? "" : ` (${event.data.reason})`}`)
      case "session.error":
        lastError = firstLine(event.data.message, 500) || `copilot reported an error (${event.data.errorType})`
        showLine(out, `✗ copilot: ${lastError}`)
        return limit(out, CopilotLimit.fromSessionError(event.data.errorType, event.data.statusCode, lastError))
      case "session.warning":
        return showLine(out, `! copilot: ${firstLine(event.data.message, 300)}`)
      case "result":
        sawResult = true
        return
    }
  }

  const onStderr = (out: HarnessEvents, text: string) => {
    const plain = stripAnsi(text).trim()
    if (plain === "") return
    lastStderr = plain
    showLine(out, plain)
  }

  const json = makeJsonOutput({
    agent: "copilot",
    decodeLine,
    // A long finished message is read whole (it is the model's text); others have their long strings (tool output) cut.
    agentTextHead: /^\s*\{\s*"type"\s*:\s*"assistant\.message"/,
    isAgentText: (event) => event.type === "assistant.message",
    onEvent,
    onStderr,
    onExit: (out) => {
      if (lastError !== null) out.push(HarnessEvent.Failed({ message: lastError }))
      else if (!sawResult) out.push(HarnessEvent.Failed({ message: lastStderr === "" ? NO_RESULT : `${NO_RESULT}: ${firstLine(lastStderr, 300)}` }))
    },
    ...(options.maxLineLength === undefined ? {} : { maxLineLength: options.maxLineLength })
  })

  return {
    feed: json.feed,
    limit: (limited, log) => HarnessEvent.Limited(CopilotLimit.withLoggedRetryAfter(limited, log)),
    report: (text) => {
      const models = text === null ? null : decodeUsageFile(text)
      return models === null || models.length === 0 ? [] : [HarnessEvent.Usage({ usage: toUsage(models) })]
    }
  }
}
