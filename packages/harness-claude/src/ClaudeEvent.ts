import { type DecodedLine as DecodedLineOf, makeLineDecoder } from "@spool/core"
import { Option, Schema } from "effect"

/*
 * The events `claude -p --output-format stream-json --verbose` (2.1) prints, one JSON object per
 * line. Only the fields spool uses are declared; anything else in a line is ignored, and a missing
 * number counts as 0. Content blocks are decoded one by one, so a block of a kind spool does not
 * know (thinking, images) never hides the rest of a message.
 */

const count = Schema.optionalWith(Schema.Number, { default: () => 0 })

/** Null for the agent's own (top-level) messages; the id of the Task tool call for a sub-agent's. */
const parent = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })

/** A reply of the model (or, with `is_api_error_message`, claude's own report of an API error). */
export const Assistant = Schema.Struct({
  type: Schema.Literal("assistant"),
  message: Schema.Struct({ content: Schema.Array(Schema.Unknown) }),
  parent_tool_use_id: parent,
  is_api_error_message: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

/** Tool results going back to the model. */
export const User = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({ content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown)) }),
  parent_tool_use_id: parent
})

/** A tool call claude refused because it was not allowed to ask: the run goes on without it. */
export const PermissionDenied = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.Literal("permission_denied"),
  tool_name: Schema.optional(Schema.String),
  tool_use_id: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String)
})

/** A failed model request that claude is about to retry. */
export const ApiRetry = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.Literal("api_retry"),
  attempt: Schema.optional(Schema.Number),
  max_retries: Schema.optional(Schema.Number),
  retry_delay_ms: Schema.optional(Schema.Number),
  error_status: Schema.optional(Schema.NullOr(Schema.Number)),
  error: Schema.optional(Schema.String)
})

/**
 * The state of a subscription's usage limits. Its details are read defensively (see
 * `ClaudeLimit.fromRateLimitEvent`): they sit in `rate_limit_info` and have moved between versions.
 */
export const RateLimitEvent = Schema.Struct({
  type: Schema.Literal("rate_limit_event"),
  rate_limit_info: Schema.optional(Schema.Unknown),
  status: Schema.optional(Schema.Unknown),
  resetsAt: Schema.optional(Schema.Unknown),
  resets_at: Schema.optional(Schema.Unknown),
  rateLimitType: Schema.optional(Schema.Unknown),
  rate_limit_type: Schema.optional(Schema.Unknown)
})

const Usage = Schema.Struct({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  output_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ thinking_tokens: count })))
})

/** The last event of a run: totals of the whole run, and whether it failed. */
export const Result = Schema.Struct({
  type: Schema.Literal("result"),
  subtype: Schema.optionalWith(Schema.String, { default: () => "success" }),
  is_error: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** The text of the last message only (an echo of an assistant message already printed). */
  result: Schema.optional(Schema.String),
  errors: Schema.optional(Schema.Array(Schema.String)),
  total_cost_usd: Schema.optional(Schema.NullOr(Schema.Number)),
  usage: Schema.optional(Usage),
  permission_denials: Schema.optionalWith(
    Schema.Array(Schema.Struct({ tool_name: Schema.String, tool_input: Schema.optional(Schema.Unknown) })),
    { default: () => [] }
  ),
  api_error_status: Schema.optional(Schema.NullOr(Schema.Number))
})
export type Result = typeof Result.Type

export const ClaudeEvent = Schema.Union(Assistant, User, PermissionDenied, ApiRetry, RateLimitEvent, Result)
export type ClaudeEvent = typeof ClaudeEvent.Type

export const TextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  is_error: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  content: Schema.optional(Schema.Unknown)
})
export const ContentBlock = Schema.Union(TextBlock, ToolUseBlock, ToolResultBlock)
export type ContentBlock = typeof ContentBlock.Type

const decodeBlock = Schema.decodeUnknownOption(ContentBlock)

/** The blocks of a message spool understands, in order. */
export const contentBlocks = (content: string | ReadonlyArray<unknown>): Array<ContentBlock> =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : content.flatMap((block) => Option.toArray(decodeBlock(block)))

/** The text of a tool result's content: a string, or its text blocks joined. */
export const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("")
}

export type DecodedLine = DecodedLineOf<ClaudeEvent>

/** Reads one stdout line: an event spool understands, another JSON event (ignored), or plain text. */
export const decodeLine = makeLineDecoder(ClaudeEvent)
