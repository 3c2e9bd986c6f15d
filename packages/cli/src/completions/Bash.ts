import { commandOffers, type Offer, rootOffers, sameOptions, type Values } from "./Offers.js"

/** Text in POSIX single quotes, for bash and zsh: nothing in it is expanded. */
export const singleQuoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

/** One row a script's walker reads: `<spelling> <name> <switch|value|values>` (`values`: repeatable). */
const rows = (options: ReadonlyArray<Offer>) =>
  options.flatMap((option) =>
    option.spellings.map((spelling) =>
      singleQuoted(`${spelling} ${option.name} ${option.value === null ? "switch" : option.repeatable ? "values" : "value"}`)
    )
  )

const pattern = (keys: ReadonlyArray<string>) => keys.map(singleQuoted).join(" | ")

const compgen = (values: Values): ReadonlyArray<string> => {
  switch (values.kind) {
    case "free":
      return []
    case "files":
      return ["local IFS=$'\\n'", "compopt -o filenames 2>/dev/null", `COMPREPLY=($(compgen -f -- "$2"))`]
    case "directories":
      return ["local IFS=$'\\n'", "compopt -o filenames 2>/dev/null", `COMPREPLY=($(compgen -d -- "$2"))`]
    case "words":
      return [`COMPREPLY=($(compgen -W ${singleQuoted(values.words.join(" "))} -- "$2"))`]
  }
}

/** The case arms of `_spool_values`: `<command>:<name>` (the command empty before one) to its values. */
const valueArms = () => {
  const arms: Array<string> = []
  const add = (commands: ReadonlyArray<string>, options: ReadonlyArray<Offer>) => {
    for (const option of options) {
      const body = option.value === null ? [] : compgen(option.value.values)
      if (body.length > 0) arms.push(`    ${pattern(commands.map((command) => `${command}:${option.name}`))})`, ...body.map((line) => `      ${line}`), "      ;;")
    }
  }
  add([""], rootOffers)
  for (const { names, command } of sameOptions()) add(names, command.options)
  return arms
}

/** An arm of `_spool_options`: the rows of `options`, an option's spellings to a line. */
const optionArm = (key: string, options: ReadonlyArray<Offer>) =>
  [`    ${key})`, "      _spool_rows=(", ...options.map((option) => `        ${rows([option]).join(" ")}`), "      )", "      ;;"].join("\n")

/** The bash script: `complete -F _spool spool`, with a function that reads the words as spool does. */
export const bashScript = (): string => {
  const commandNames = commandOffers.map((command) => command.name)
  return `# spool's completions for bash, printed by \`spool --completions bash\`. Save them as
# ~/.local/share/bash-completion/completions/spool, or source them from ~/.bashrc.

# The options spool reads before a command ('') or after the command $1, as rows of _spool_rows:
# "<spelling> <name> <switch|value|values>" (values: a value, and it may be given again).
_spool_options() {
  case $1 in
${optionArm("''", rootOffers)}
${sameOptions().map(({ names, command }) => optionArm(pattern(names), command.options)).join("\n")}
    *) _spool_rows=() ;;
  esac
}

# Sets name and kind (the caller's) to those of the spelling $1 in _spool_rows; fails if it is not there.
_spool_find() {
  local row
  for row in "\${_spool_rows[@]}"; do
    if [[ \${row%% *} == "$1" ]]; then
      row=\${row#* }
      name=\${row%% *}
      kind=\${row#* }
      return 0
    fi
  done
  return 1
}

# COMPREPLY: the values of the option $1 (<command>:<name>) that start with $2, each after $3.
_spool_values() {
  case $1 in
${valueArms().join("\n")}
  esac
  if [[ -n $3 ]]; then COMPREPLY=("\${COMPREPLY[@]/#/$3}"); fi
}

_spool() {
  COMPREPLY=()
  local -a words=() seen=() _spool_rows=()
  local word command='' pending='' name kind j joined=0 prefix=''
  # bash splits --name=value at the '=': put the pieces together again.
  for ((j = 1; j <= COMP_CWORD; j++)); do
    word=\${COMP_WORDS[j]}
    if ((joined)); then
      words[\${#words[@]}-1]+=$word
      joined=0
    elif [[ $word == = && \${#words[@]} -gt 0 && \${words[\${#words[@]}-1]} == --?* && \${words[\${#words[@]}-1]} != *=* ]]; then
      words[\${#words[@]}-1]+==
      joined=1
    else
      words+=("$word")
    fi
  done
  local cur=\${words[\${#words[@]}-1]} last=$((\${#words[@]} - 2))
  _spool_options ''
  for ((j = 0; j <= last; j++)); do
    word=\${words[j]}
    if [[ -z $command ]]; then
      if [[ $word != -* || $word == - || $word == -[0-9]* ]]; then
        case $word in
          ${pattern(commandNames)}) command=$word; _spool_options "$command"; continue ;;
        esac
        return 0
      fi
      # An option before the command ends what spool reads, once it has its value.
      if _spool_find "$word" && [[ $kind != switch && $j -eq $last ]]; then
        pending=$name
        continue
      fi
      return 0
    fi
    # After --, every word is the prompt's.
    [[ $word == -- ]] && return 0
    [[ $word != -* || $word == - || $word == -[0-9]* ]] && continue
    [[ $word == --* ]] && word=\${word%%=*}
    _spool_find "$word" || continue
    if [[ $kind != switch && \${words[j]} != *=* && $j -eq $last ]]; then pending=$name; else seen+=("$name"); fi
  done
  if [[ -n $pending ]]; then
    _spool_values "$command:$pending" "$cur" ''
    return 0
  fi
  if [[ $cur == --*=* ]]; then
    _spool_find "\${cur%%=*}" && [[ $kind != switch ]] || return 0
    # Where '=' does not split words, the word is the whole --name=value.
    [[ \${COMP_WORDS[COMP_CWORD]} == "$cur" ]] && prefix=\${cur%%=*}=
    _spool_values "$command:$name" "\${cur#*=}" "$prefix"
    return 0
  fi
  if [[ -z $command && $cur != -* ]]; then
    COMPREPLY=($(compgen -W ${singleQuoted(commandNames.join(" "))} -- "$cur"))
    return 0
  fi
  # Anything else not an option is a word of the prompt.
  [[ $cur == -* ]] || return 0
  local -a offers=()
  local row spelling
  for row in "\${_spool_rows[@]}"; do
    spelling=\${row%% *}
    row=\${row#* }
    name=\${row%% *}
    kind=\${row#* }
    if [[ $kind == values || " \${seen[*]} " != *" $name "* ]]; then offers+=("$spelling"); fi
  done
  COMPREPLY=($(compgen -W "\${offers[*]}" -- "$cur"))
}

complete -F _spool spool
`
}
