import { Schema } from "effect"

/** The command line asks for something that cannot be done as written. Exit code 2. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String,
  /**
   * The option (its long name) whose value this is about, when it is about one: if the settings
   * file gave that value, the message names the file and its key.
   */
  option: Schema.optional(Schema.String)
}) {}

/** A usage error; with `option`, about the value of that option (its long name). */
export const usageError = (message: string, option?: string) => new UsageError(option === undefined ? { message } : { message, option })
