import { type DecodedLine as DecodedLineOf, makeLineDecoder } from "@spool/core"
import { Either, Schema } from "effect"

/*
 * The events `gemini --output-format stream-json` (0.61) prints, one JSON object per line. Only
 * the fields spool uses are declared; anything else in a line is ignored, a missing number counts as 0.
 */

const count = Schema.optionalWith(Schema.Number, { default: () => 0 })

/**
 * A piece of a message: the user's prompt once, then the model's text as it streams (`delta`),
 * a model turn in several pieces. Thoughts are never printed.
 */
export const Message = Schema.Struct({
  type: Schema.Literal("message"),
  role: Schema.String,
  content: Schema.String
})

/** The model called a tool; the call runs next (unless it is not allowed). */
export const ToolUse = Schema.Struct({
  type: Schema.Literal("tool_use"),
  tool_name: Schema.String,
  tool_id: Schema.String,
  parameters: Schema.optionalWith(Schema.Unknown, { default: () => ({}) })
})

/**
 * The outcome of a tool call. In headless mode a tool that needs approval is not offered at all
 * unless the approval mode allows it: the model's call then fails as `tool_not_registered`.
 */
export const ToolResult = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_id: Schema.String,
  status: Schema.String,
  error: Schema.optional(Schema.Struct({ type: Schema.optional(Schema.String), message: Schema.String }))
})

/** A warning or an error of the run that does not end it (a loop detected, an empty model response). */
export const ErrorEvent = Schema.Struct({
  type: Schema.Literal("error"),
  severity: Schema.optionalWith(Schema.String, { default: () => "error" }),
  message: Schema.String
})

/** Tokens of the whole run, over every model it used. `input_tokens` includes the `cached` ones. */
export const Stats = Schema.Struct({
  total_tokens: count,
  input_tokens: count,
  output_tokens: count,
  cached: count
})

/**
 * The last event of a run: `status` is `error` after a model API error (`error.message` is then
 * `[API Error: <body>]`) or an empty model response (the `error` event before it says which).
 */
export const Result = Schema.Struct({
  type: Schema.Literal("result"),
  status: Schema.String,
  error: Schema.optional(Schema.Struct({ type: Schema.optional(Schema.String), message: Schema.String })),
  stats: Schema.optionalWith(Stats, { default: () => ({ total_tokens: 0, input_tokens: 0, output_tokens: 0, cached: 0 }) })
})
export type Result = typeof Result.Type

export const GeminiEvent = Schema.Union(Message, ToolUse, ToolResult, ErrorEvent, Result)
export type GeminiEvent = typeof GeminiEvent.Type

export type DecodedLine = DecodedLineOf<GeminiEvent>

/** Reads one stdout line: an event spool understands, another JSON event (ignored), or plain text. */
export const decodeLine = makeLineDecoder(GeminiEvent)

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())

/** What an API error body (`{"error":{"code":429,"message":...,"status":...,"details":[...]}}`) says. */
export interface ApiError {
  readonly code: number | null
  readonly message: string
  readonly status: string | null
  /** `RetryInfo.retryDelay` in milliseconds (`"37s"`), when given. */
  readonly retryDelayMs: number | null
}

const API_ERROR = /^\[API Error: ([\s\S]*)\]$/

/** The API error a result's message (`[API Error: {...}]`) carries, or null when it is not one with a JSON body. */
export const apiErrorOf = (message: string): ApiError | null => {
  const wrapped = API_ERROR.exec(message.trim())
  const json = parseJson(wrapped === null ? message : wrapped[1]!)
  if (Either.isLeft(json)) return null
  const error = (json.right as { error?: Record<string, unknown> } | null)?.error
  if (typeof error !== "object" || error === null || typeof error.message !== "string") return null
  const details = Array.isArray(error.details) ? error.details as Array<Record<string, unknown>> : []
  const delay = details.map((detail) => detail.retryDelay).find((value) => typeof value === "string") as string | undefined
  const seconds = delay === undefined ? null : /^(\d+(?:\.\d+)?)s$/.exec(delay)
  return {
    code: typeof error.code === "number" ? error.code : null,
    message: error.message,
    status: typeof error.status === "string" ? error.status : null,
    retryDelayMs: seconds === null ? null : Math.round(Number(seconds[1]) * 1000)
  }
}
