import type { Palette } from "./Colour.js"
import { type CommandSpec, commandBuiltIns, commands, rootOptions, version } from "./Commands.js"
import { exitCodeTable } from "./ExitCode.js"
import { groups, longAliases, type OptionSpec, signature } from "./OptionSpec.js"

const heading = (p: Palette, text: string) => p.bold(`${text[0]!.toUpperCase()}${text.slice(1)}:`)

/** One line per option: the signature in a column as wide as `width`, the description, aliases and default. */
const optionLine = (p: Palette, spec: OptionSpec, width: number) => {
  const aliases = longAliases(spec)
  const notes = [
    ...(aliases.length > 0 ? [`also ${aliases.join(", ")}`] : []),
    ...(spec.kind === "value" && spec.default !== undefined ? [`default: ${spec.default}`] : [])
  ]
  return `  ${p.cyan(signature(spec).padEnd(width))}  ${spec.description}${notes.length > 0 ? p.dim(` (${notes.join("; ")})`) : ""}`
}

/** `spool ralph --help`: usage, the options by group, exit codes, examples. */
export const commandHelp = (command: CommandSpec, p: Palette): string => {
  const specs = [...Object.values(command.options), ...Object.values(commandBuiltIns)]
  const width = Math.max(...specs.map((spec) => signature(spec).length))
  const lines = [
    `${p.bold("Usage:")} spool ${command.name} ${command.operands}`,
    "",
    `${command.aliasOf === null ? "Runs" : `The same as spool ${command.aliasOf}: runs`} an agent in a loop on a change (.spool/changes/<id>/; or ito's, OpenSpec's, spec-kit's) until it prints <promise>COMPLETE</promise>.`,
    "The prompt is the words after the options (or --prompt-file). Options may also be set in the \"ralph\" section of .spool/config.json (see README); the command line wins.",
  ]
  for (const group of groups) {
    const inGroup = specs.filter((spec) => spec.group === group)
    if (inGroup.length === 0) continue
    lines.push("", heading(p, group), ...inGroup.map((spec) => optionLine(p, spec, width)))
  }
  lines.push("", heading(p, "exit codes"), ...exitCodeTable.map(({ code, meaning }) => `  ${String(code).padEnd(4)} ${meaning}`))
  lines.push("", heading(p, "examples"), ...command.examples.map((example) => `  ${example}`))
  return lines.join("\n")
}

/** `spool --help`: the commands, one line each. */
export const rootHelp = (p: Palette): string => {
  const specs = Object.values(rootOptions)
  const width = Math.max(...specs.map((spec) => signature(spec).length), ...commands.map((c) => c.name.length))
  return [
    `spool ${version}: drives a coding agent around a loop on a change proposal`,
    "",
    `${p.bold("Usage:")} spool <command> [options]`,
    "",
    heading(p, "commands"),
    ...commands.map((command) => `  ${p.cyan(command.name.padEnd(width))}  ${command.summary}`),
    "",
    heading(p, "options"),
    ...specs.map((spec) => optionLine(p, spec, width)),
    "",
    "See spool <command> --help for a command's options, e.g. spool ralph --help."
  ].join("\n")
}
