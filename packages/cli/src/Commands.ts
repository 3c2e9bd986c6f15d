import { type OptionSpec, switchOption, valueOption } from "./OptionSpec.js"
import { ralphOptionSpecs } from "./ralph/Options.js"
import packageJson from "../package.json" with { type: "json" }

/** A command of `spool`, as the help and the command-line checks see it. */
export interface CommandSpec {
  readonly name: string
  readonly summary: string
  /** What follows the options in the usage line. */
  readonly operands: string
  readonly aliasOf: string | null
  readonly options: Readonly<Record<string, OptionSpec>>
  readonly examples: ReadonlyArray<string>
}

export const version: string = packageJson.version

/** Understood by every command; spool answers them itself. */
export const commandBuiltIns = {
  help: switchOption({ name: "help", aliases: ["h"], group: "output", description: "show this help" }),
  version: switchOption({ name: "version", group: "output", description: "print spool's version" })
}

/** Understood before the command. */
export const rootOptions = {
  ...commandBuiltIns,
  completions: valueOption({
    name: "completions",
    group: "output",
    pseudo: "bash|zsh|fish",
    example: "bash",
    description: "print a shell completion script (see README for installing it)"
  })
}

export const completionShells = ["bash", "zsh", "fish"] as const

const ralph: CommandSpec = {
  name: "ralph",
  summary: "run an agent in a loop on a change until it prints the completion promise",
  operands: "[options] [prompt..]",
  aliasOf: null,
  options: ralphOptionSpecs,
  examples: [
    "spool ralph \"Implement the change.\" --change 002-01 --allow-all",
    "spool ralph \"Make the tests pass.\" -c 002-01 --verify \"pnpm test\" --review claude   # done once pnpm test passes and claude approves"
  ]
}

export const commands: ReadonlyArray<CommandSpec> = [
  ralph,
  { ...ralph, name: "loop", summary: "the same as spool ralph", aliasOf: "ralph" }
]

export const findCommand = (name: string) => commands.find((command) => command.name === name)
