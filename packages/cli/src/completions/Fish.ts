import { commandOffers, longSpellings, type Offer, rootOffers, sameOptions, shortSpellings, type Values } from "./Offers.js"

/** Text in fish's single quotes, where only `\\` and `\'` are escapes. */
const quoted = (text: string) => `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`

const takes = (values: Values) => {
  switch (values.kind) {
    case "free":
      return "-x"
    case "files":
      return "-r -F"
    case "directories":
      return `-x -a ${quoted("(__fish_complete_directories)")}`
    case "words":
      return `-x -a ${quoted(values.words.join(" "))}`
  }
}

/** `complete` for one option, offered where `__spool_offers` says the commands (`ralph,loop`, or '') read it still. */
const completeLine = (commands: ReadonlyArray<string>, option: Offer) => {
  // An option that may be given once is not offered once it is there, under any spelling.
  const condition = [commands.join(",") || '""', ...(option.repeatable ? [] : option.spellings)].join(" ")
  const flags = [
    ...shortSpellings(option).map((spelling) => `-s ${spelling.slice(1)}`),
    ...longSpellings(option).map((spelling) => `-l ${spelling.slice(2)}`)
  ]
  const value = option.value === null ? [] : [takes(option.value.values)]
  return ["complete -c spool", `-n ${quoted(`__spool_offers ${condition}`)}`, ...flags, ...value, `-d ${quoted(option.description)}`].join(" ")
}

/** The `switch` cases of the options that wait for a value in the next word: `<command> <spelling>`. */
const valueCases = () => {
  const groups = [{ names: [""], options: rootOffers }, ...sameOptions().map(({ names, command }) => ({ names, options: command.options }))]
  return groups.flatMap(({ names, options }) =>
    options.filter((option) => option.value !== null).map((option) =>
      names.flatMap((name) => option.spellings.map((spelling) => quoted(`${name} ${spelling}`))).join(" ")
    )
  ).join(" \\\n            ")
}

/**
 * The fish script: `complete -c spool` lines, each offered where `__spool_offers` says so, which
 * reads the words before the cursor as spool does: the command, the options given once already,
 * and `--`, after which there are only the prompt's words.
 */
export const fishScript = (): string => {
  const names = commandOffers.map((command) => quoted(command.name)).join(" ")
  return `# spool's completions for fish, printed by \`spool --completions fish\`. Save them as
# ~/.config/fish/completions/spool.fish.

# Whether the option $argv[2] of command $argv[1] ('' before the command) waits for its value in the next word.
function __spool_takes_value
    switch "$argv[1] $argv[2]"
        case ${valueCases()}
            return 0
    end
    return 1
end

# Whether the word $argv[1] is not an option: a command, a value or a word of the prompt.
function __spool_operand
    test -z "$argv[1]"; or string match -qr -- '^([^-]|-$|-[0-9])' $argv[1]
end

# Whether spool reads, at the cursor, an option of one of the commands $argv[1] (ralph,loop; or ''
# before the command, where each option ends the command line) that is none of $argv[2..] given already.
function __spool_offers
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l at ''
    set -l seen
    set -l i 0
    for token in $tokens
        set i (math $i + 1)
        if test -z "$at"
            if __spool_operand $token
                contains -- "$token" ${names}; or return 1
                set at $token
            else if not __spool_takes_value '' $token; or test $i -lt (count $tokens)
                return 1
            end
        else if test "$token" = --
            return 1
        else if not __spool_operand $token; and not begin; __spool_takes_value $at $token; and test $i -eq (count $tokens); end
            set -a seen (string replace -r -- '^(--[^=]+)=.*' '$1' $token)
        end
    end
    contains -- "$at" (string split , -- $argv[1]); or return 1
    for spelling in $argv[2..-1]
        contains -- $spelling $seen; and return 1
    end
    return 0
end

complete -c spool -f
${commandOffers.map((command) => `complete -c spool -n ${quoted('__spool_offers ""')} -a ${quoted(command.name)} -d ${quoted(command.summary)}`).join("\n")}
${rootOffers.map((option) => completeLine([], option)).join("\n")}
${sameOptions().flatMap(({ names: commands, command }) => ["", ...command.options.map((option) => completeLine(commands, option))]).join("\n")}
`
}
