import { type DecodedLine as DecodedLineOf, makeLineDecoder } from "@spool/core"
import { Either, Schema } from "effect"

/*
 * The events `codex exec --json` (0.169) prints, one JSON object per line. Only the fields spool
 * uses are declared; anything else in a line is ignored, and a missing number counts as 0.
 */

const count = Schema.optionalWith(Schema.Number, { default: () => 0 })

/** A complete message of the agent: `text` is the whole message. */
export const AgentMessage = Schema.Struct({
  type: Schema.Literal("agent_message"),
  text: Schema.String
})

/** A shell command the agent ran; `status` is `failed` for a non-zero exit code. */
export const CommandExecution = Schema.Struct({
  type: Schema.Literal("command_execution"),
  command: Schema.String,
  exit_code: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }),
  status: Schema.optionalWith(Schema.String, { default: () => "completed" })
})

/** Files the agent's patch added, updated or deleted (absolute paths). */
export const FileChange = Schema.Struct({
  type: Schema.Literal("file_change"),
  changes: Schema.Array(Schema.Struct({ path: Schema.String, kind: Schema.String })),
  status: Schema.optionalWith(Schema.String, { default: () => "completed" })
})

/** A non-fatal problem codex reports as an item (e.g. no metadata for the model). */
export const ErrorItem = Schema.Struct({
  type: Schema.Literal("error"),
  message: Schema.String
})

/** An item finished; `item.started` and `item.updated` are not needed, the finished item says it all. */
export const ItemCompleted = Schema.Struct({
  type: Schema.Literal("item.completed"),
  item: Schema.Union(AgentMessage, CommandExecution, FileChange, ErrorItem)
})

/** The turn is over: the tokens of all its model requests together. No cost is reported. */
export const TurnCompleted = Schema.Struct({
  type: Schema.Literal("turn.completed"),
  usage: Schema.optionalWith(
    Schema.Struct({
      input_tokens: count,
      cached_input_tokens: count,
      cache_write_input_tokens: count,
      output_tokens: count,
      reasoning_output_tokens: count
    }),
    {
      default: () => ({
        input_tokens: 0,
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
        output_tokens: 0,
        reasoning_output_tokens: 0
      })
    }
  )
})

/** The turn failed (a model error): codex exits 1 after it. After an HTTP 400, `message` is the raw body. */
export const TurnFailed = Schema.Struct({
  type: Schema.Literal("turn.failed"),
  error: Schema.Struct({ message: Schema.String })
})

/** A non-fatal error of the stream (`Reconnecting… 1/5`), or the error a `turn.failed` then repeats. */
export const StreamError = Schema.Struct({
  type: Schema.Literal("error"),
  message: Schema.String
})

export const CodexEvent = Schema.Union(ItemCompleted, TurnCompleted, TurnFailed, StreamError)
export type CodexEvent = typeof CodexEvent.Type

export type DecodedLine = DecodedLineOf<CodexEvent>

/** Reads one stdout line: an event spool understands, another JSON event (ignored), or plain text. */
export const decodeLine = makeLineDecoder(CodexEvent)

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())

/** The message inside an API error body (`{"error":{"message":...}}`), or the text as it is. */
export const errorMessage = (text: string): string => {
  const error = (Either.getOrNull(parseJson(text)) as { error?: { message?: unknown } } | null)?.error
  return typeof error?.message === "string" && error.message.trim() !== "" ? error.message : text
}
