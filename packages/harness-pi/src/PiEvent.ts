import { type DecodedLine as DecodedLineOf, makeLineDecoder } from "@spool/core"
import { Schema } from "effect"

/*
 * The events `pi -p --mode json` (0.73) prints, one JSON object per line. Only the fields spool
 * uses are declared; anything else in a line is ignored, a missing number counts as 0.
 */

const count = Schema.optionalWith(Schema.Number, { default: () => 0 })

/** Tokens and cost of one model request; pi's `input` excludes the cached tokens. */
export const Usage = Schema.Struct({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  cost: Schema.optionalWith(Schema.Struct({ total: count }), { default: () => ({ total: 0 }) })
})

/** A block of a message's content: text, thinking or a tool call (only text matters here). */
export const Block = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String)
})

/**
 * A finished message. For the model's own (`role: assistant`), `stopReason` is `error` (or
 * `aborted`) when the request failed, with the API's words in `errorMessage`; usage is per request.
 */
export const MessageEnd = Schema.Struct({
  type: Schema.Literal("message_end"),
  message: Schema.Struct({
    role: Schema.String,
    content: Schema.optionalWith(Schema.Union(Schema.String, Schema.Array(Block)), { default: () => [] }),
    stopReason: Schema.optional(Schema.String),
    errorMessage: Schema.optional(Schema.String),
    usage: Schema.optional(Usage)
  })
})
export type MessageEnd = typeof MessageEnd.Type

/** A tool call starts: its name and arguments. */
export const ToolStart = Schema.Struct({
  type: Schema.Literal("tool_execution_start"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  args: Schema.optionalWith(Schema.Unknown, { default: () => ({}) })
})

/** A tool call ended; `result.content` holds its output (or error) as text blocks. */
export const ToolEnd = Schema.Struct({
  type: Schema.Literal("tool_execution_end"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  isError: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  result: Schema.optional(Schema.Struct({ content: Schema.optional(Schema.Union(Schema.String, Schema.Array(Block))) }))
})

/** The agent's run ended (it may be retried: `auto_retry_start` then follows). */
export const AgentEnd = Schema.Struct({ type: Schema.Literal("agent_end") })

/** pi retries a failed model request after `delayMs`. */
export const RetryStart = Schema.Struct({
  type: Schema.Literal("auto_retry_start"),
  attempt: count,
  maxAttempts: count,
  delayMs: count,
  errorMessage: Schema.optionalWith(Schema.String, { default: () => "" })
})

/** pi's retries are over; `finalError` when they all failed. */
export const RetryEnd = Schema.Struct({
  type: Schema.Literal("auto_retry_end"),
  success: Schema.Boolean,
  finalError: Schema.optional(Schema.String)
})

export const PiEvent = Schema.Union(MessageEnd, ToolStart, ToolEnd, AgentEnd, RetryStart, RetryEnd)
export type PiEvent = typeof PiEvent.Type

export type DecodedLine = DecodedLineOf<PiEvent>

const decodeEvent = makeLineDecoder(PiEvent)
const IGNORED: DecodedLine = { _tag: "Ignored" }

/**
 * Every streamed update repeats the whole message so far (`message_update`); spool reads each
 * message once it is finished, so an update is skipped by its first bytes, never parsed.
 */
const UPDATE = /^\s*\{\s*"type"\s*:\s*"(?:message_update|tool_execution_update)"/

/** Reads one stdout line: an event spool understands, another JSON event (ignored), or plain text. */
export const decodeLine = (line: string): DecodedLine => (UPDATE.test(line) ? IGNORED : decodeEvent(line))

/** The text of content blocks (text blocks only: never thinking or tool calls). */
export const textOf = (content: string | ReadonlyArray<typeof Block.Type>): string =>
  typeof content === "string" ? content : content.flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : [])).join("")
