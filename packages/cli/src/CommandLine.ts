import { Either } from "effect"
import { type CommandSpec, commandBuiltIns, commands, completionShells, findCommand, rootOptions } from "./Commands.js"
import { example, type OptionSpec, spellings } from "./OptionSpec.js"
import { closest } from "@spool/app"
import { UsageError } from "./UsageError.js"

export type Shell = (typeof completionShells)[number]

/** What a command line asks for, once spool has checked it. */
export type Request =
  | { readonly _tag: "RootHelp" }
  | { readonly _tag: "CommandHelp"; readonly command: CommandSpec }
  | { readonly _tag: "Version" }
  | { readonly _tag: "Completions"; readonly shell: Shell }
  /**
   * `args`: every option as `--name [value]`, then `--` and the operands, for the parser; `given`:
   * the options it names, by their long names, in the order given.
   */
  | { readonly _tag: "Run"; readonly command: CommandSpec; readonly args: ReadonlyArray<string>; readonly given: ReadonlyArray<string> }

const usage = (message: string) => Either.left(new UsageError({ message }))

/** `--name=value` -> [`--name`, `value`]; anything else -> [itself, undefined]. */
const splitFlag = (arg: string): readonly [string, string | undefined] => {
  const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
  return eq > 2 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined]
}

const isOperand = (arg: string) => !arg.startsWith("-") || arg === "-" || /^-\d/.test(arg)

const byFlag = (specs: ReadonlyArray<OptionSpec>) => new Map(specs.flatMap((spec) => spellings(spec).map((flag) => [flag, spec] as const)))

const didYouMean = (typed: string, candidates: ReadonlyArray<string>) => {
  const suggestion = closest(typed, candidates)
  return suggestion === null ? "" : `; did you mean ${suggestion}?`
}

const commandOptionFlags = byFlag(commands.flatMap((command) => Object.values(command.options)))
const rootFlags = byFlag(Object.values(rootOptions))

/**
 * Reads the command line the way `--help` describes it, so that every mistake gets one line that
 * says what to do: unknown commands and options (with the closest match), values missing or given
 * to a switch, options given twice. The parser then only converts what this let through.
 */
export const readCommandLine = (args: ReadonlyArray<string>): Either.Either<Request, UsageError> => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") break
    if (isOperand(arg)) return readCommand(arg, args.slice(i + 1))
    const [flag, inline] = splitFlag(arg)
    const spec = rootFlags.get(flag)
    if (spec === undefined) {
      if (commandOptionFlags.has(flag)) return usage(`${flag} goes after the command: spool ralph ${flag} ...`)
      return usage(`unknown option '${flag}'${didYouMean(flag, [...rootFlags.keys()]) || "; see spool --help"}`)
    }
    if (spec.kind === "switch" && inline !== undefined) return usage(`${flag} takes no value; write ${flag} alone, without '=${inline}'`)
    if (spec.name === "help") return Either.right({ _tag: "RootHelp" })
    if (spec.name === "version") return Either.right({ _tag: "Version" })
    const shell = inline ?? args[++i]
    if (shell === undefined || !(completionShells as ReadonlyArray<string>).includes(shell)) {
      return usage(`--completions needs a shell: ${completionShells.join(", ")}, e.g. spool --completions bash`)
    }
    return Either.right({ _tag: "Completions", shell: shell as Shell })
  }
  return Either.right({ _tag: "RootHelp" })
}

const readCommand = (name: string, args: ReadonlyArray<string>): Either.Either<Request, UsageError> => {
  const command = findCommand(name)
  if (command === undefined) {
    const suggestion = closest(name, commands.map((c) => c.name))
    return usage(
      suggestion === null
        ? `unknown command '${name}'; the commands are ${commands.map((c) => c.name).join(", ")} (see spool --help)`
        : `unknown command '${name}'; did you mean spool ${suggestion}?`
    )
  }
  const dashes = args.indexOf("--")
  const [options, forced] = dashes === -1 ? [args, []] : [args.slice(0, dashes), args.slice(dashes + 1)]
  if (options.includes("--help") || options.includes("-h")) return Either.right({ _tag: "CommandHelp", command })
  if (options.includes("--version")) return Either.right({ _tag: "Version" })

  const known = byFlag([...Object.values(command.options), ...Object.values(commandBuiltIns)])
  const isOption = (arg: string) => arg === "--" || known.has(splitFlag(arg)[0])
  const parsed: Array<string> = []
  const operands: Array<string> = []
  const seen = new Map<string, string>()
  for (let i = 0; i < options.length; i++) {
    const arg = options[i]!
    if (isOperand(arg)) {
      operands.push(arg)
      continue
    }
    const [flag, inline] = splitFlag(arg)
    const spec = known.get(flag)
    if (spec === undefined) {
      if (rootFlags.has(flag)) return usage(`${flag} goes before the command: spool ${flag} ...`)
      const suggestion = didYouMean(flag, [...known.keys()].filter((k) => k.startsWith("--")))
      return usage(
        `unknown option '${flag}'${suggestion || `; see spool ${command.name} --help (prompt words that start with '-' go after --)`}`
      )
    }
    const earlier = seen.get(spec.name)
    if (earlier !== undefined && !(spec.kind === "value" && spec.repeatable === true)) {
      return usage(earlier === flag ? `${flag} is given twice; give it once` : `${earlier} and ${flag} are the same option; give it once`)
    }
    seen.set(spec.name, flag)
    if (spec.kind === "switch") {
      if (inline !== undefined) return usage(`${flag} takes no value; write ${flag} alone, without '=${inline}'`)
      parsed.push(`--${spec.name}`)
      continue
    }
    const value = inline ?? (i + 1 < options.length && !isOption(options[i + 1]!) ? options[++i] : undefined)
    // The parser drops an empty value, which for an option given once per value would lose it unseen.
    if (value === undefined || (spec.repeatable === true && value.trim() === "")) return usage(`${flag} needs a value, e.g. ${example(spec)}`)
    parsed.push(`--${spec.name}`, value)
  }
  return Either.right({ _tag: "Run", command, args: [...parsed, "--", ...operands, ...forced], given: [...seen.keys()] })
}
