/** A plain `spool ralph --status` request: read by the status entry, which loads no command-line parser. */
export interface StatusArgs {
  readonly change: string | null
  readonly json: boolean
}

/**
 * `ralph|loop --status [--json] [--change <id> | -c <id> | --change=<id>]` and nothing else; any
 * other command line is null and goes to the full parser (which also explains mistakes).
 */
export const parseStatusArgs = (argv: ReadonlyArray<string>): StatusArgs | null => {
  const [command, ...rest] = argv
  if (command !== "ralph" && command !== "loop") return null
  let status = false
  let json = false
  let change: string | null = null
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    if (arg === "--status" && !status) status = true
    else if (arg === "--json" && !json) json = true
    else if ((arg === "--change" || arg === "-c") && change === null && i + 1 < rest.length && !rest[i + 1]!.startsWith("-")) {
      change = rest[++i]!
    } else if (arg.startsWith("--change=") && change === null && arg.length > 9) change = arg.slice(9)
    else return null
  }
  return status ? { change, json } : null
}
