import { spellings } from "./OptionSpec.js"
import { statusOptionSpecs as specs } from "./ralph/StatusOptions.js"

/** A plain `spool ralph --status` request: read by the status entry, which loads no command-line parser. */
export interface StatusArgs {
  readonly change: string | null
  readonly json: boolean
}

const status = spellings(specs.status)
const json = spellings(specs.json)
const change = spellings(specs.changes)
const changeInline = change.filter((flag) => flag.startsWith("--")).map((flag) => `${flag}=`)

/**
 * `ralph|loop --status [--json] [--change <id> | -c <id> | --change=<id>]` (the spellings of the
 * option table's entries) and nothing else; any other command line is null and goes to the full
 * parser (which also explains mistakes).
 */
export const parseStatusArgs = (argv: ReadonlyArray<string>): StatusArgs | null => {
  const [command, ...rest] = argv
  if (command !== "ralph" && command !== "loop") return null
  let given = false
  let asJson = false
  let changeId: string | null = null
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    const inline = changeInline.find((prefix) => arg.startsWith(prefix))
    if (status.includes(arg) && !given) given = true
    else if (json.includes(arg) && !asJson) asJson = true
    else if (change.includes(arg) && changeId === null && i + 1 < rest.length && !rest[i + 1]!.startsWith("-")) changeId = rest[++i]!
    else if (inline !== undefined && changeId === null && arg.length > inline.length) changeId = arg.slice(inline.length)
    else return null
  }
  return given ? { change: changeId, json: asJson } : null
}
