import { type DecodedLine as DecodedLineOf, makeLineDecoder } from "@spool/core"
import { Either, Schema } from "effect"

/*
 * The events `copilot --output-format json` (1.0.102) prints, one JSON object per line:
 * `{ "type", "data", "id", "timestamp" }`. Only the fields spool uses are declared; anything else
 * in a line is ignored. A sub-agent's events carry its `agentId` (beside `data` or in it); the
 * main agent's none.
 */

const text = Schema.optionalWith(Schema.String, { default: () => "" })
const agentId = Schema.optional(Schema.String)

/** A finished message of the model (its text streamed before in deltas, which spool skips unread). */
export const AssistantMessage = Schema.Struct({
  type: Schema.Literal("assistant.message"),
  agentId,
  data: Schema.Struct({ content: text, agentId })
})

/** A tool call starts: its name and arguments (`create`: `path`, `file_text`; `bash`: `command`). */
export const ToolStart = Schema.Struct({
  type: Schema.Literal("tool.execution_start"),
  agentId,
  data: Schema.Struct({
    toolCallId: Schema.String,
    toolName: Schema.String,
    arguments: Schema.optionalWith(Schema.Unknown, { default: () => ({}) }),
    agentId
  })
})

/**
 * A tool call ended. Without approval a call that needs it fails at once: `error.code` is `denied`.
 * A shell command that exited non-zero still succeeds: its exit code is in `shellExecution`.
 */
export const ToolComplete = Schema.Struct({
  type: Schema.Literal("tool.execution_complete"),
  agentId,
  data: Schema.Struct({
    toolCallId: Schema.String,
    success: Schema.Boolean,
    error: Schema.optional(Schema.Struct({ message: text, code: Schema.optional(Schema.String) })),
    shellExecution: Schema.optional(Schema.Struct({ exitCode: Schema.optional(Schema.Number) })),
    agentId
  })
})

/**
 * A model request failed; copilot may retry it (`assistant.turn_retry` follows), for a 429 honouring
 * a `retry-after` of up to a few minutes, five times. `errorMessage` is the API's error body.
 */
export const CallFailure = Schema.Struct({
  type: Schema.Literal("model.call_failure"),
  data: Schema.Struct({
    statusCode: Schema.optional(Schema.Number),
    errorType: Schema.optional(Schema.String),
    errorMessage: text,
    retryAttempt: Schema.optional(Schema.Number)
  })
})

/** copilot retries a failed model request (`reason`: `rate_limit`, ...). */
export const TurnRetry = Schema.Struct({
  type: Schema.Literal("assistant.turn_retry"),
  data: Schema.Struct({ reason: text })
})

/** The run failed (`errorType`: `query`, `rate_limit`, `quota_exhausted`, ...): copilot exits 1 after it. */
export const SessionError = Schema.Struct({
  type: Schema.Literal("session.error"),
  data: Schema.Struct({ errorType: text, message: text, statusCode: Schema.optional(Schema.Number) })
})

/** Something the person should know that does not end the run (a quota running low). */
export const SessionWarning = Schema.Struct({
  type: Schema.Literal("session.warning"),
  data: Schema.Struct({ message: text })
})

/** The last line of a run. */
export const Result = Schema.Struct({
  type: Schema.Literal("result"),
  exitCode: Schema.optional(Schema.Number)
})

/** Whether a message or tool call is a sub-agent's (a `task`), not the main agent's. */
export const isSubAgent = (event: { readonly agentId?: string | undefined; readonly data: { readonly agentId?: string | undefined } }) =>
  (event.agentId ?? event.data.agentId ?? "") !== ""

export const CopilotEvent = Schema.Union(AssistantMessage, ToolStart, ToolComplete, CallFailure, TurnRetry, SessionError, SessionWarning, Result)
export type CopilotEvent = typeof CopilotEvent.Type

export type DecodedLine = DecodedLineOf<CopilotEvent>

const decodeEvent = makeLineDecoder(CopilotEvent)
const IGNORED: DecodedLine = { _tag: "Ignored" }

/** Streamed pieces (each message comes whole after them) and lists spool never reads: skipped by their first bytes, never parsed. */
const SKIPPED = /^\s*\{\s*"type"\s*:\s*"(?:assistant\.message_delta|assistant\.streaming_delta|assistant\.tool_call_delta|assistant\.reasoning_delta|tool\.execution_partial_result|session\.skills_loaded|session\.background_tasks_changed)"/

/** Reads one stdout line: an event spool understands, another JSON event (ignored), or plain text. */
export const decodeLine = (line: string): DecodedLine => (SKIPPED.test(line) ? IGNORED : decodeEvent(line))

/** Tokens of one model as the usage file counts them: `inputTokens` include the cached and cache-written ones, `outputTokens` the reasoning ones. */
const Tokens = Schema.Struct({
  inputTokens: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  outputTokens: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  cacheReadTokens: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  cacheWriteTokens: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  reasoningTokens: Schema.optionalWith(Schema.Number, { default: () => 0 })
})
export type Tokens = typeof Tokens.Type

/** The file `--usage-output-file` writes at the end of a run: the run's tokens per model (none when no request succeeded). */
export const UsageFile = Schema.parseJson(Schema.Struct({
  modelMetrics: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Struct({ usage: Tokens }) }), { default: () => ({}) })
}))

/** The usage file's tokens per model, or null when it is not one. */
export const decodeUsageFile = (text: string): ReadonlyArray<Tokens> | null =>
  Either.match(Schema.decodeUnknownEither(UsageFile)(text), {
    onLeft: () => null,
    onRight: (file) => Object.values(file.modelMetrics).map((model) => model.usage)
  })

/** The API's own words in a failed request's error body (`{"message": ...}` or `{"error": {"message", "code"}}`), or the body as it is. */
export const apiMessageOf = (body: string): { readonly message: string; readonly code: string | null } => {
  try {
    // JSON's null as no fields; a number, string or boolean has none of the fields read either.
    const record = (JSON.parse(body) ?? {}) as Record<string, unknown>
    const inner = typeof record.error === "object" && record.error !== null ? record.error as Record<string, unknown> : record
    const message = typeof inner.message === "string" ? inner.message : body
    const code = typeof inner.code === "string" ? inner.code : typeof inner.type === "string" ? inner.type : null
    return { message, code }
  } catch {
    return { message: body, code: null }
  }
}
