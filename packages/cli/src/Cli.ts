import { Command } from "@effect/cli"
import { loop, ralph } from "./commands/ralph.js"

const spool = Command.make("spool").pipe(
  Command.withDescription("Spec-driven development tools"),
  Command.withSubcommands([ralph, loop])
)

export const run = Command.run(spool, { name: "spool", version: "0.1.0" })
