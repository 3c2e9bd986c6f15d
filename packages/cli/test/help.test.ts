import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { commandBuiltIns, commands, completionShells, rootOptions, version } from "../src/Commands.js"
import { completionScript } from "../src/Completions.js"
import { exitCodeTable } from "../src/ExitCode.js"
import { groups, longAliases, type OptionSpec, signature, spellings } from "../src/OptionSpec.js"
import { ralphOptionSpecs } from "../src/ralph/Options.js"
import { makeWorkspace, spool } from "./support.js"

const root = makeWorkspace({ git: false })
const run = (...args: Array<string>) => spool(args, { cwd: root })

interface HelpRow {
  readonly group: string
  readonly signature: string
  readonly aliases: ReadonlyArray<string>
  readonly default: string | null
}

/** The option lines of `spool ralph --help`, by group. */
const helpRows = (help: string): Array<HelpRow> => {
  const rows: Array<HelpRow> = []
  let group: string | null = null
  for (const line of help.split("\n")) {
    const heading = /^([A-Z][a-z ]+):$/.exec(line)
    if (heading) group = heading[1]!.toLowerCase()
    const option = /^ {2}(-\S.*?) {2,}(.*)$/.exec(line)
    if (group === null || option === null || !(groups as ReadonlyArray<string>).includes(group)) continue
    const notes = /\(([^()]*)\)$/.exec(option[2]!)?.[1] ?? ""
    rows.push({
      group,
      signature: option[1]!,
      aliases: /also ([^;]*)/.exec(notes)?.[1]!.split(", ") ?? [],
      default: /default: ([^;]*)/.exec(notes)?.[1] ?? null
    })
  }
  return rows
}

/** The rows of README's option table of `spool ralph`. */
const readmeRows = (): Array<HelpRow> => {
  const readme = readFileSync(join(__dirname, "..", "..", "..", "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("## `spool ralph [options] [prompt..]`"))
  const table = section.slice(0, section.indexOf("\n\n", section.indexOf("| --- |")))
  return table.split("\n").filter((line) => line.startsWith("| `")).map((line) => {
    const [, names, meaning] = /^\| (.*?) \| (.*) \|$/.exec(line)!
    const [first, ...aliases] = [...names!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
    return {
      group: /^([a-z ]+):/.exec(meaning!)![1]!,
      signature: first!,
      aliases,
      default: /default `([^`]+)`/.exec(meaning!)?.[1] ?? null
    }
  })
}

describe("help", () => {
  it("`spool ralph --help` fits on a screen or two: usage, options by group, exit codes, examples", async () => {
    const result = await run("ralph", "--help")
    expect(result.code).toBe(0)
    expect(result.stderr).toBe("")
    const lines = result.stdout.trimEnd().split("\n")
    // Two screens of 55 lines.
    expect(lines.length).toBeLessThan(110)
    expect(lines[0]).toBe("Usage: spool ralph [options] [prompt..]")
    expect(result.stdout).not.toContain("This setting is optional")
    for (const { code, meaning } of exitCodeTable) expect(lines).toContain(`  ${String(code).padEnd(4)} ${meaning}`)
    expect(result.stdout).toMatch(/Examples:\n(  spool ralph .*\n){2,}/)
    expect((await run("ralph", "-h")).stdout).toBe(result.stdout)
  })

  it("lists every option of the option definitions, once, in its group, with its default", async () => {
    const help = (await run("ralph", "--help")).stdout
    const specs: Array<OptionSpec> = [...Object.values(ralphOptionSpecs), ...Object.values(commandBuiltIns)]
    const rows = helpRows(help)
    expect(rows.map((row) => row.signature)).toEqual(specs.map(signature))
    for (const [row, spec] of rows.map((row, i) => [row, specs[i]!] as const)) {
      expect(row.group).toBe(spec.group)
      expect(row.aliases).toEqual(longAliases(spec))
      expect(row.default).toBe(spec.kind === "value" ? spec.default ?? null : null)
    }
    for (const spec of specs) for (const flag of spellings(spec)) expect(help).toContain(flag)
  })

  it("`spool loop --help` is the help of the same command", async () => {
    const ralph = (await run("ralph", "--help")).stdout
    const loop = (await run("loop", "--help")).stdout
    expect(loop.split("\n")[0]).toBe("Usage: spool loop [options] [prompt..]")
    expect(loop).toContain("The same as spool ralph")
    expect(helpRows(loop)).toEqual(helpRows(ralph))
  })

  it("`spool --help` (and `spool` alone) lists the commands, one line each", async () => {
    const result = await run("--help")
    expect(result.code).toBe(0)
    for (const command of commands) expect(result.stdout).toMatch(new RegExp(`^  ${command.name} +${command.summary}$`, "m"))
    for (const spec of Object.values(rootOptions)) expect(result.stdout).toContain(signature(spec))
    expect((await run()).stdout).toBe(result.stdout)
    expect((await run("-h")).stdout).toBe(result.stdout)
  })

  it("`--version` prints the version, before or after the command", async () => {
    expect(await run("--version")).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: "" })
    expect(await run("ralph", "--version")).toMatchObject({ code: 0, stdout: `${version}\n` })
  })

  it.each(completionShells)("`spool --completions %s` prints the completion script written from the option table", async (shell) => {
    const result = await run("--completions", shell)
    expect(result).toMatchObject({ code: 0, stderr: "" })
    // The script completions.test.ts runs in the shell: only what spool accepts, no @effect/cli built-ins.
    expect(result.stdout).toBe(completionScript(shell))
    expect(result.stdout).toContain("max-iterations")
    expect(result.stdout).not.toMatch(/wizard|log-level/)
  })

  it("README's exit codes are the ones the help lists", () => {
    const readme = readFileSync(join(__dirname, "..", "..", "..", "README.md"), "utf8")
    const section = readme.slice(readme.indexOf("### Exit codes"))
    const codes = [...section.slice(0, section.indexOf("\n\n", section.indexOf("| --- |"))).matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]))
    expect(codes).toEqual(exitCodeTable.map((row) => row.code))
  })

  it("README's option table says what `spool ralph --help` says: the same options, groups, aliases and defaults", async () => {
    const help = helpRows((await run("ralph", "--help")).stdout)
    expect(readmeRows()).toEqual(help)
  })

  it("README's settings file part names every option the file takes, and the actions it does not", () => {
    const readme = readFileSync(join(__dirname, "..", "..", "..", "README.md"), "utf8")
    const section = readme.slice(readme.indexOf("### Settings file"), readme.indexOf("### State"))
    const list = (label: string, end: string) => {
      const text = section.slice(section.indexOf(label) + label.length)
      return [...text.slice(0, text.indexOf(end)).matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!)
    }
    const specs = Object.values(ralphOptionSpecs) as ReadonlyArray<OptionSpec>
    const settable = specs.filter((spec) => spec.action !== true)
    expect(list("The keys it takes:", "The actions")).toEqual(
      settable.flatMap((spec) => [spec.name, ...(spec.aliases ?? []).filter((alias) => alias.length > 1)])
    )
    expect(list("The actions (", ")")).toEqual(specs.filter((spec) => spec.action === true).map((spec) => spec.name))
  })
})
