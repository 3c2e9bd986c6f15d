import { LoopReporter } from "@spool/core"
import { Effect, Layer } from "effect"

/** Live output and summaries on stdout, warnings on stderr. */
export const layer = Layer.succeed(LoopReporter, {
  write: (text) => Effect.sync(() => void process.stdout.write(text)),
  line: (text) => Effect.sync(() => void process.stdout.write(`${text}\n`)),
  warn: (text) => Effect.sync(() => void process.stderr.write(`warning: ${text}\n`))
})
