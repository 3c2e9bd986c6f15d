import { Schema } from "effect"

/**
 * A request asks for something that cannot be done as written: an unknown agent, a remote the
 * repository does not have, a change of another module. Said before anything runs; the CLI ends
 * with exit 2.
 */
export class RequestError extends Schema.TaggedError<RequestError>()("RequestError", {
  message: Schema.String,
  /**
   * The option (its long name, as the CLI spells it) whose value this is about, when it is about
   * one: the CLI names where that value came from.
   */
  option: Schema.optional(Schema.String)
}) {}

/** A request error; with `option`, about the value of that option. */
export const requestError = (message: string, option?: string) => new RequestError(option === undefined ? { message } : { message, option })
