import { switchOption, valueOption } from "../OptionSpec.js"

/**
 * The options of a plain `spool ralph --status`, part of `spool ralph`'s option table: the
 * `--status` entry reads its command line by these, without loading the command-line parser.
 */
export const statusOptionSpecs = {
  changes: valueOption({
    name: "change",
    aliases: ["c"],
    group: "targeting",
    pseudo: "id",
    example: "002-01",
    repeatable: true,
    description: "a directory under .spool/changes/, or a unique prefix of one; repeat it to sweep several, in order"
  }),
  status: switchOption({
    name: "status",
    action: true,
    group: "state and context",
    description: "print the loop's state and recent iterations, then exit"
  }),
  json: switchOption({
    name: "json",
    action: true,
    group: "state and context",
    description: "with --status: print one JSON object (without --change, a list of them); with --list, an array"
  })
}
