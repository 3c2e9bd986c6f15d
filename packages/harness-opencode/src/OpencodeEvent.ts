import { type DecodedLine as DecodedLineOf, makeLineDecoder } from "@spool/core"
import { Schema } from "effect"

/*
 * The events `opencode run --format json` (1.18) prints, one JSON object per line. Only the fields
 * spool uses are declared; anything else in a line is ignored, and a missing number counts as 0.
 */

const count = Schema.optionalWith(Schema.Number, { default: () => 0 })

/** One model request finished: its own tokens and cost (not a running total). */
export const StepFinish = Schema.Struct({
  type: Schema.Literal("step_finish"),
  part: Schema.Struct({
    tokens: Schema.optionalWith(
      Schema.Struct({
        input: count,
        output: count,
        reasoning: count,
        cache: Schema.optionalWith(Schema.Struct({ read: count, write: count }), { default: () => ({ read: 0, write: 0 }) })
      }),
      { default: () => ({ input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }) }
    ),
    cost: count
  })
})

/** A finished text part of the assistant's reply: `text` is the whole part, not a delta. */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  part: Schema.Struct({ id: Schema.String, text: Schema.String })
})

/** A tool call that finished (`completed`) or failed (`error`, e.g. a rejected permission). */
export const ToolUse = Schema.Struct({
  type: Schema.Literal("tool_use"),
  part: Schema.Struct({
    tool: Schema.String,
    state: Schema.Struct({
      status: Schema.String,
      input: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
      title: Schema.optional(Schema.String),
      error: Schema.optional(Schema.String)
    })
  })
})

/**
 * The session failed (model error, bad config): opencode exits 1 after it. An `APIError` carries
 * the provider's HTTP status and response headers (`retry-after` on a 429).
 */
export const SessionError = Schema.Struct({
  type: Schema.Literal("error"),
  error: Schema.Struct({
    name: Schema.optional(Schema.String),
    data: Schema.optional(Schema.Struct({
      message: Schema.optional(Schema.String),
      statusCode: Schema.optional(Schema.Number),
      status: Schema.optional(Schema.Number),
      responseHeaders: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
      responseBody: Schema.optional(Schema.String)
    }))
  })
})
export type SessionError = typeof SessionError.Type

export const OpencodeEvent = Schema.Union(StepFinish, TextPart, ToolUse, SessionError)
export type OpencodeEvent = typeof OpencodeEvent.Type

export type DecodedLine = DecodedLineOf<OpencodeEvent>

/** Reads one stdout line: an event spool understands, another JSON event (ignored), or plain text. */
export const decodeLine = makeLineDecoder(OpencodeEvent)
