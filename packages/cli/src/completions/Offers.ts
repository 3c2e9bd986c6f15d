// What the completion scripts offer, read from the option table the way `CommandLine` reads a
// command line: the commands and the root options before a command (each of which ends what spool
// reads), and after a command its options and the built-ins. The scripts of each shell are written
// from this alone.
import { layoutNames } from "@spool/core"
import { harnessNames } from "@spool/app"
import { commandBuiltIns, commands, completionShells, rootOptions } from "../Commands.js"
import { flagOf, type OptionSpec } from "../OptionSpec.js"

/** What a value option's value is completed with. */
export type Values =
  | { readonly kind: "free" }
  | { readonly kind: "files" }
  | { readonly kind: "directories" }
  | { readonly kind: "words"; readonly words: ReadonlyArray<string> }

/** One option as offered: how it is spelled, what it says, what it takes. */
export interface Offer {
  readonly name: string
  /** Every spelling, with dashes: the name first, then the aliases (`-c` for a one-letter one). */
  readonly spellings: ReadonlyArray<string>
  readonly description: string
  /** Null for a switch. */
  readonly value: { readonly pseudo: string; readonly values: Values } | null
  /** It may be given again; any other option is offered only until it is given. */
  readonly repeatable: boolean
}

export interface CommandOffers {
  readonly name: string
  readonly summary: string
  readonly options: ReadonlyArray<Offer>
}

/** The values spool knows in advance, by option name: the shells, the harnesses, the layouts. */
const choices: Readonly<Record<string, ReadonlyArray<string>>> = {
  completions: completionShells,
  harness: harnessNames,
  layout: layoutNames
}

/** Values that name a file or a directory, by the option's pseudo. */
const byPseudo: Readonly<Record<string, Values>> = {
  path: { kind: "files" },
  file: { kind: "files" },
  dir: { kind: "directories" },
  directory: { kind: "directories" }
}

const valuesOf = (name: string, pseudo: string): Values => {
  const words = choices[name]
  return words !== undefined ? { kind: "words", words } : byPseudo[pseudo] ?? { kind: "free" }
}

const offer = (spec: OptionSpec): Offer => ({
  name: spec.name,
  spellings: [spec.name, ...(spec.aliases ?? [])].map(flagOf),
  description: spec.description,
  value: spec.kind === "value" ? { pseudo: spec.pseudo, values: valuesOf(spec.name, spec.pseudo) } : null,
  repeatable: spec.kind === "value" && spec.repeatable === true
})

/** Before the command; every one of them ends what spool reads (with its value, for `--completions`). */
export const rootOffers: ReadonlyArray<Offer> = Object.values(rootOptions).map(offer)

/** Each command, with its options and then the built-ins it also takes (`--help`, `--version`). */
export const commandOffers: ReadonlyArray<CommandOffers> = commands.map((command) => ({
  name: command.name,
  summary: command.summary,
  options: [...Object.values(command.options), ...Object.values(commandBuiltIns)].map(offer)
}))

/** The option's spellings that are long (`--name`) and short (`-c`). */
export const longSpellings = (option: Offer) => option.spellings.filter((spelling) => spelling.startsWith("--"))
export const shortSpellings = (option: Offer) => option.spellings.filter((spelling) => !spelling.startsWith("--"))

/**
 * Commands whose options are the same, together (`ralph` and `loop`), so that a script says each
 * table once: the names, and one of the commands.
 */
export const sameOptions = (): ReadonlyArray<{ readonly names: ReadonlyArray<string>; readonly command: CommandOffers }> => {
  const groups = new Map<string, { names: Array<string>; command: CommandOffers }>()
  for (const command of commandOffers) {
    const key = JSON.stringify(command.options)
    const group = groups.get(key)
    if (group === undefined) groups.set(key, { names: [command.name], command })
    else group.names.push(command.name)
  }
  return [...groups.values()]
}
