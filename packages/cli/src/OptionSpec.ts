// The option table's shapes: plain data, read by the help, the checks of the command line, the
// settings file and the `--status` entry alike (which loads no command-line parser).

/** The groups of the help, in the order it shows them. */
export const groups = ["targeting", "backlog", "harness", "iterations", "state and context", "git", "across machines", "guards", "sandbox", "being told", "output"] as const
export type Group = (typeof groups)[number]

interface Common {
  /** The long name, without dashes. */
  readonly name: string
  /** Other names: one letter for a short option (`c` is `-c`), longer for a long one (`yolo`). */
  readonly aliases?: ReadonlyArray<string>
  readonly group: Group
  /** One line, lower case, no default: the help adds it. */
  readonly description: string
  /** It asks for something to be done at once (`--status`), so a settings file cannot hold it. */
  readonly action?: true
}

/** An option that is on when given; it takes no value. */
export interface SwitchSpec extends Common {
  readonly kind: "switch"
}

/** An option with a value: `--name <pseudo>` or `--name=<pseudo>`. */
export interface ValueSpec extends Common {
  readonly kind: "value"
  readonly pseudo: string
  readonly default?: string
  /** A value to show in messages, when the default is not one. */
  readonly example?: string
  /** It may be given several times; every value counts, in order. */
  readonly repeatable?: true
}

export type OptionSpec = SwitchSpec | ValueSpec

export const switchOption = <const S extends Omit<SwitchSpec, "kind">>(spec: S) => ({ ...spec, kind: "switch" as const })
export const valueOption = <const S extends Omit<ValueSpec, "kind">>(spec: S) => ({ ...spec, kind: "value" as const })

/** `--name` or `-c`, as typed on the command line. */
export const flagOf = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`)

/** Every spelling of an option: its name and its aliases, with dashes. */
export const spellings = (spec: OptionSpec) => [spec.name, ...(spec.aliases ?? [])].map(flagOf)

/** How the help and README show an option: short aliases, the name, the value. */
export const signature = (spec: OptionSpec) => {
  const short = (spec.aliases ?? []).filter((alias) => alias.length === 1).map((alias) => `${flagOf(alias)}, `).join("")
  return `${short}--${spec.name}${spec.kind === "value" ? ` <${spec.pseudo}>` : ""}`
}

/** The long aliases, which the help names in the description. */
export const longAliases = (spec: OptionSpec) => (spec.aliases ?? []).filter((alias) => alias.length > 1).map(flagOf)

/** An example of the option with a value, for messages: `--max-iterations 20`. */
export const example = (spec: ValueSpec) => `--${spec.name} ${spec.example ?? spec.default ?? `<${spec.pseudo}>`}`
