import { singleQuoted } from "./Bash.js"
import { type CommandOffers, commandOffers, type Offer, rootOffers, sameOptions, type Values } from "./Offers.js"

/** Text inside `_arguments`' `[description]` or `:message:`: `\`, `[`, `]` and `:` escaped. */
const escaped = (text: string) => text.replace(/[\\[\]:]/g, (c) => `\\${c}`)

const action = (values: Values) => {
  switch (values.kind) {
    case "free":
      return " "
    case "files":
      return "_files"
    case "directories":
      return "_files -/"
    case "words":
      return `(${values.words.join(" ")})`
  }
}

/**
 * The `_arguments` specs of an option, one per spelling: `--name=` takes its value after `=` or in
 * the next word, `-c` in the next word. `exclusions` names what it rules out once given; by default
 * the option's other spellings, unless it may be given again (`*`).
 */
const specs = (option: Offer, exclusions?: string) => {
  const excluded = exclusions ?? (option.repeatable ? "*" : option.spellings.length > 1 ? `(${option.spellings.join(" ")})` : "")
  const value = option.value === null ? "" : `:${escaped(option.value.pseudo)}:${action(option.value.values)}`
  return option.spellings.map((spelling) => {
    const inline = spelling.startsWith("--") && option.value !== null
    return singleQuoted(`${excluded}${spelling}${inline ? "=" : ""}[${escaped(option.description)}]${value}`)
  })
}

const lines = (items: ReadonlyArray<string>, indent: string) => items.map((item) => `${indent}${item}`).join(" \\\n")

const functionName = (command: CommandOffers) => `_spool_${command.name.replace(/\W/g, "_")}`

/** A command's function: its options (`-S`: none after `--`), then the words of the prompt. */
const commandFunction = (command: CommandOffers) => `${functionName(command)}() {
  _arguments -S \\
${lines([...command.options.flatMap((option) => specs(option)), singleQuoted("*:prompt: ")], "    ")}
}`

/**
 * The zsh script: `#compdef spool`, for a directory on `$fpath` (as `_spool`), or to source, which
 * registers it with `compdef`. Before the command `_arguments` offers the commands (`_describe`)
 * and the root options, each of which ends the command line; after it, the command's function.
 */
export const zshScript = (): string => {
  const groups = sameOptions()
  const described = commandOffers.map((command) => singleQuoted(`${command.name.replaceAll(":", "\\:")}:${command.summary}`))
  const dispatch = groups.map(({ names, command }) => `        (${names.join("|")}) ${functionName(command)} && ret=0 ;;`)
  return `#compdef spool
# spool's completions for zsh, printed by \`spool --completions zsh\`. Save them as _spool in a
# directory on $fpath (then run compinit), or source them after compinit.

${groups.map(({ command }) => commandFunction(command)).join("\n\n")}

_spool() {
  local curcontext=$curcontext state state_descr line ret=1
  typeset -A opt_args
  _arguments -C \\
${lines([...rootOffers.flatMap((option) => specs(option, "(- : *)")), singleQuoted(": :->command"), singleQuoted("*:: :->option")], "    ")} && ret=0
  case $state in
    (command)
      local -a commands=(
${described.map((entry) => `        ${entry}`).join("\n")}
      )
      _describe -t commands 'spool command' commands && ret=0
      ;;
    (option)
      curcontext=\${curcontext%:*:*}:spool-$words[1]:
      case $words[1] in
${dispatch.join("\n")}
      esac
      ;;
  esac
  return ret
}

if [[ $funcstack[1] == _spool ]]; then
  _spool "$@"
else
  compdef _spool spool
fi
`
}
