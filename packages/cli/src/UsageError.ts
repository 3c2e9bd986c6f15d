import { Schema } from "effect"

/** The command line asks for something that cannot be done as written. Exit code 2. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}
