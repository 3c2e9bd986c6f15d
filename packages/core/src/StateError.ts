import { Schema } from "effect"

/** A per-change state file could not be read, decoded or written. */
export class StateError extends Schema.TaggedError<StateError>()("StateError", {
  reason: Schema.Literal("Read", "Write", "Decode"),
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
    }
  }
}
