import { type DecodedLine as DecodedLineOf, makeLineDecoder } from "@spool/core"
import { ClaudeEvent } from "@spool/harness-claude"
import { Schema } from "effect"

/*
 * The events `qwen -o stream-json` (0.24) prints, one JSON object per line: Claude Code's
 * stream-json, nearly. Only the fields spool uses are declared; anything else in a line is
 * ignored, and a missing number counts as 0. Content blocks are decoded one by one, so a block of
 * a kind spool does not know (thinking) never hides the rest of a message.
 */

const count = Schema.optionalWith(Schema.Number, { default: () => 0 })

/** Null for the agent's own (top-level) messages; the id of the agent tool call for a sub-agent's. */
const parent = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })

/**
 * A message of the model. A failed model request is one too: qwen appends its report of the
 * error (`[API Error: ...]`, `Quota exhausted: ...`) to the message as text, with no flag.
 */
export const Assistant = Schema.Struct({
  type: Schema.Literal("assistant"),
  message: Schema.Struct({ content: Schema.Array(Schema.Unknown) }),
  parent_tool_use_id: parent
})

/** Tool results going back to the model. */
export const User = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({ content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown)) }),
  parent_tool_use_id: parent
})

/**
 * Tokens of the whole run. `input_tokens` counts the cached ones too (and, for Anthropic's API,
 * the cache writes); qwen reports no cost.
 */
export const Usage = Schema.Struct({
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count
})

/** The last event of a run: totals of the whole run, and whether it failed (then with `error.message`). */
export const Result = Schema.Struct({
  type: Schema.Literal("result"),
  subtype: Schema.optionalWith(Schema.String, { default: () => "success" }),
  is_error: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** The text of the last message only (an echo of an assistant message already printed). */
  result: Schema.optional(Schema.String),
  error: Schema.optional(Schema.Struct({ message: Schema.optional(Schema.String) })),
  usage: Schema.optional(Usage),
  permission_denials: Schema.optionalWith(
    Schema.Array(Schema.Struct({ tool_name: Schema.String, tool_input: Schema.optional(Schema.Unknown) })),
    { default: () => [] }
  )
})
export type Result = typeof Result.Type

export const QwenEvent = Schema.Union(Assistant, User, Result)
export type QwenEvent = typeof QwenEvent.Type

/** Content blocks are Claude Code's, read as claude's harness reads them. */
export const { ContentBlock, contentBlocks, textOf } = ClaudeEvent

export type DecodedLine = DecodedLineOf<QwenEvent>

/** Reads one stdout line: an event spool understands, another JSON event (ignored), or plain text. */
export const decodeLine = makeLineDecoder(QwenEvent)
