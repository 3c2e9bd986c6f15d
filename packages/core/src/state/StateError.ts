import { Schema } from "effect"

/** A file spool reads or keeps could not be read, decoded or written. */
export class StateError extends Schema.TaggedError<StateError>()("StateError", {
  reason: Schema.Literal("Read", "Write", "Decode", "TooLarge", "NotText", "Outside"),
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    switch (this.reason) {
      case "Read":
        return `cannot read ${this.path}: ${this.detail}`
      case "Write":
        return `cannot write ${this.path}: ${this.detail} (check permissions and free disk space)`
      case "Decode":
        return `${this.path} is damaged: ${this.detail} (fix or delete the file)`
      case "TooLarge":
        return `${this.path} is too large: ${this.detail}`
      case "NotText":
        return `${this.path} is not a text file (it holds NUL bytes): ${this.detail}`
      case "Outside":
        return `${this.path} leads outside the repository (${this.detail}); spool only reads and writes inside it`
    }
  }
}
