import { Schema } from "effect"

/**
 * A request asks for something that cannot be done as written: an unknown agent, a remote the
 * repository does not have, a change of another module. Said before anything runs; the CLI ends
 * with exit 2.
 */
export class RequestError extends Schema.TaggedError<RequestError>()("RequestError", {
  message: Schema.String
}) {}

export const requestError = (message: string) => new RequestError({ message })
