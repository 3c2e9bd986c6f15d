import { firstLine, HarnessEvent, type HarnessEvents, type HarnessUsage, type JsonOutput, makeJsonOutput, stripAnsi } from "@spool/core"
import { decodeLine, type OpencodeEvent } from "./OpencodeEvent.js"
import { usageLimitOf } from "./OpencodeLimit.js"

export interface OpencodeOutputOptions {
  /** The agent's working directory: file paths under it are shown relative to it. */
  readonly cwd: string
  readonly maxLineLength?: number
}

/** Turns the raw output of one `opencode run --format json` into spool's harness events. */
export type OpencodeOutput = JsonOutput

export const permissionWarning = (detail: string) =>
  `opencode auto-rejected a permission request (${detail}), so the agent could not do it; ` +
  `rerun with --allow-all to approve the agent's tool calls without asking`

const PERMISSION_REJECTED = /permission requested: (.*); auto-rejecting/
const REJECTED_TOOL_CALL = /rejected permission/i

/**
 * Text written into one column (the live view, or the agent's text) from several blocks: a new
 * block starts on a new line, so a promise opening a text part also opens a line; a block that
 * continues is appended as it is. A block's text is never empty.
 */
const makeColumn = () => {
  let atLineStart = true
  let lastBlock: unknown = null
  return (text: string, block: unknown): string => {
    const separated = !atLineStart && block !== lastBlock ? `\n${text}` : text
    atLineStart = text.endsWith("\n")
    lastBlock = block
    return separated
  }
}

const toUsage = (part: Extract<OpencodeEvent, { type: "step_finish" }>["part"]): HarnessUsage => ({
  inputTokens: part.tokens.input,
  outputTokens: part.tokens.output,
  reasoningTokens: part.tokens.reasoning,
  cacheReadTokens: part.tokens.cache.read,
  cacheWriteTokens: part.tokens.cache.write,
  cost: part.cost
})

/**
 * Mapping, per run:
 * - every raw chunk is passed on as `Output` first
 * - a text part: `AgentText` and `Display`, once per part (a repeated part only adds what is new)
 * - a tool call: one `Display` line (`→ write src/a.ts`, or `✗ ... : error`)
 * - `step_finish`: one `Usage` per model request, with that request's tokens and cost; sum them
 * - `error` events, non-JSON stdout lines and stderr lines: `Display`; an API error with status
 *   429 (or 529) is also a `Limited`, with its `retry-after`
 * - a rejected permission (stderr notice or rejected tool call): one `Warning` per run
 */
export const makeOpencodeOutput = (options: OpencodeOutputOptions): OpencodeOutput => {
  const display = makeColumn()
  const agent = makeColumn()
  const texts = new Map<string, string>()
  let warned = false

  const relative = (file: string) => file.startsWith(`${options.cwd}/`) ? file.slice(options.cwd.length + 1) : file

  const showLine = (out: HarnessEvents, text: string) =>
    out.push(HarnessEvent.Display({ text: display(`${text}\n`, Symbol()) }))

  const warnPermission = (out: HarnessEvents, detail: string) => {
    if (warned) return
    warned = true
    out.push(HarnessEvent.Warning({ message: permissionWarning(detail) }))
  }

  const onText = (out: HarnessEvents, id: string, text: string) => {
    const before = texts.get(id)
    const added = before === undefined ? text : text.startsWith(before) ? text.slice(before.length) : ""
    if (added === "") return
    texts.set(id, text)
    out.push(HarnessEvent.AgentText({ text: agent(added, id) }))
    out.push(HarnessEvent.Display({ text: display(added, id) }))
  }

  const toolTarget = (input: Readonly<Record<string, unknown>> | undefined, title: string | undefined) => {
    for (const key of ["filePath", "path", "command", "pattern", "url", "description"]) {
      const value = input?.[key]
      if (typeof value === "string" && value !== "") return firstLine(relative(value), 120)
    }
    return title === undefined ? "" : firstLine(title, 120)
  }

  const onEvent = (out: HarnessEvents, event: OpencodeEvent) => {
    switch (event.type) {
      case "text":
        return onText(out, event.part.id, event.part.text)
      case "step_finish":
        return void out.push(HarnessEvent.Usage({ usage: toUsage(event.part) }))
      case "tool_use": {
        const { state, tool } = event.part
        const call = `${tool} ${toolTarget(state.input, state.title)}`.trimEnd()
        if (state.status !== "error") return showLine(out, `→ ${call}`)
        const error = state.error ?? "failed"
        showLine(out, `✗ ${call}: ${firstLine(error)}`)
        if (REJECTED_TOOL_CALL.test(error)) warnPermission(out, call)
        return
      }
      case "error": {
        showLine(out, `✗ opencode error: ${firstLine(event.error.data?.message ?? event.error.name ?? "unknown error", 500)}`)
        const limit = usageLimitOf(event.error)
        if (limit !== null) out.push(limit)
        return
      }
    }
  }

  const onStderr = (out: HarnessEvents, text: string) => {
    const plain = stripAnsi(text)
    const rejected = PERMISSION_REJECTED.exec(plain)
    if (rejected !== null) warnPermission(out, rejected[1]!)
    if (plain.trim() !== "") showLine(out, plain)
  }

  return makeJsonOutput({
    agent: "opencode",
    decodeLine,
    // A long line holding the agent's own text is read whole; others have their long strings (tool output) cut.
    agentTextHead: /"type"\s*:\s*"text"/,
    isAgentText: (event) => event.type === "text",
    onEvent,
    onStderr,
    show: showLine,
    ...(options.maxLineLength === undefined ? {} : { maxLineLength: options.maxLineLength })
  })
}
