import { describe, expect, it } from "@effect/vitest"
import { harnessNames } from "@spool/app"
import { layoutNames } from "@spool/core"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { commandBuiltIns, commands, completionShells, rootOptions } from "../src/Commands.js"
import type { Shell } from "../src/CommandLine.js"
import { completionScript } from "../src/Completions.js"
import { type OptionSpec, spellings } from "../src/OptionSpec.js"

// The completion scripts run in the real shells: bash's function on the words bash would hand it (and
// bash's line editor on a pseudo-terminal, fixtures/bash-readline.zsh), fish's `complete -C`, and
// zsh's completion system on a pseudo-terminal (fixtures/zsh-complete.zsh).
// A missing shell fails the test (spawnSync's ENOENT): `pnpm test` installs zsh and fish first.

const dir = mkdtempSync(join(tmpdir(), "spool-completions-"))
const home = join(dir, "home")
mkdirSync(join(dir, "zsh"))
mkdirSync(home)
const scripts: Record<Shell, string> = { bash: join(dir, "spool.bash"), zsh: join(dir, "zsh", "_spool"), fish: join(dir, "spool.fish") }
for (const shell of completionShells) writeFileSync(scripts[shell], completionScript(shell))
const zshComplete = join(__dirname, "fixtures", "zsh-complete.zsh")
const bashReadline = join(__dirname, "fixtures", "bash-readline.zsh")

// A prompt file to complete, in a directory of its own.
const files = join(dir, "files")
mkdirSync(files)
writeFileSync(join(files, "prompt.md"), "Implement the change.\n")

/** The shell's output: it must end well and say nothing on stderr. */
const run = (command: string, args: ReadonlyArray<string>) => {
  const result = spawnSync(command, args, {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local", "share") }
  })
  if (result.error !== undefined) throw result.error
  expect(result.stderr, `${command} ${args.join(" ")}`).toBe("")
  expect(result.status, `${command} ${args.join(" ")}`).toBe(0)
  return result.stdout.split("\n").filter((line) => line !== "")
}

interface Offered {
  readonly word: string
  readonly description: string | null
}

/** The words bash hands the function: split at spaces and, as readline's word breaks do, at `=`. */
const bashWords = (line: string, splitAtEquals: boolean) =>
  line.split(" ").flatMap((word) => (splitAtEquals && word.includes("=") ? word.split(/(=)/).filter((piece) => piece !== "") : [word]))

const bash = (words: ReadonlyArray<string>) =>
  run("bash", [
    "--norc",
    "--noprofile",
    "-c",
    `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _spool; printf '%s\\n' "\${COMPREPLY[@]}"`,
    "bash",
    scripts.bash,
    ...words
  ])

/** What the shell offers at the end of `line` (the cursor there): the words, and their descriptions where it shows them. */
const complete = (shell: Shell, line: string): Array<Offered> => {
  switch (shell) {
    case "bash":
      return bash(bashWords(line, true)).map((word) => ({ word, description: null }))
    case "fish": {
      // fish offers `--name=value` whole: the value alone, as the other shells offer it.
      const inline = /(--[^\s=]+=)\S*$/.exec(line)?.[1] ?? ""
      return run("fish", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", scripts.fish, line]).map((output) => {
        const [word, description] = output.split("\t")
        return { word: word!.slice(inline.length), description: description ?? null }
      })
    }
    case "zsh":
      return run("zsh", ["-f", zshComplete, "fpath", scripts.zsh, line]).map((output) => {
        const [word, display] = output.split("\t")
        const at = display?.indexOf(" -- ") ?? -1
        return { word: word!, description: at === -1 ? null : display!.slice(at + 4) }
      })
  }
}

const words = (shell: Shell, line: string) => complete(shell, line).map((offered) => offered.word).sort()
const sorted = (list: ReadonlyArray<string>) => [...list].sort()
const describes = (shell: Shell) => shell !== "bash"

const allSpellings = (specs: ReadonlyArray<OptionSpec>) => specs.flatMap(spellings)

describe.each(completionShells)("the %s completion script", (shell) => {
  it("offers the commands at the first word, with their summaries where the shell shows them", () => {
    const offered = complete(shell, "spool ")
    expect(sorted(offered.map((o) => o.word))).toEqual(sorted(commands.map((command) => command.name)))
    if (describes(shell)) {
      for (const command of commands) expect(offered.find((o) => o.word === command.name)?.description).toBe(command.summary)
    }
    expect(words(shell, "spool lo")).toEqual(["loop"])
  })

  it("offers the root options before the command, and nothing after one of them: each ends the command line", () => {
    expect(words(shell, "spool -")).toEqual(sorted(allSpellings(Object.values(rootOptions))))
    expect(words(shell, "spool --completions ")).toEqual(sorted(completionShells))
    expect(words(shell, "spool --completions=")).toEqual(sorted(completionShells))
    expect(words(shell, "spool --completions=z")).toEqual(["zsh"])
    expect(words(shell, "spool --completions bash ")).toEqual([])
    expect(words(shell, "spool --completions bash -")).toEqual([])
    expect(words(shell, "spool --help -")).toEqual([])
    expect(words(shell, "spool --version ")).toEqual([])
    expect(words(shell, "spool -- ")).toEqual([])
    expect(words(shell, "spool bogus -")).toEqual([])
  })

  it.each(commands.map((command) => command.name))(
    "offers after `%s` every option of its table and the built-ins, each described, and nothing else",
    (name) => {
      const command = commands.find((c) => c.name === name)!
      const specs = [...Object.values(command.options), ...Object.values(commandBuiltIns)]
      const offered = complete(shell, `spool ${name} -`)
      expect(sorted(offered.map((o) => o.word))).toEqual(sorted(allSpellings(specs)))
      if (describes(shell)) {
        for (const spec of specs) {
          for (const spelling of spellings(spec)) expect(offered.find((o) => o.word === spelling)?.description, spelling).toBe(spec.description)
        }
      }
    }
  )

  it("offers what spool reads after the command: its options, not @effect/cli's built-ins, and --completions only before it", () => {
    expect(words(shell, "spool ralph --max-it")).toEqual(["--max-iterations"])
    expect(words(shell, "spool ralph --comp")).toEqual(["--completion-promise"])
    expect(words(shell, "spool loop --no-com")).toEqual(["--no-commit"])
    for (const line of ["spool ralph --", "spool -", "spool --"]) {
      expect(words(shell, line).filter((word) => /wizard|log-level/.test(word))).toEqual([])
    }
    expect(words(shell, "spool ralph --").filter((word) => word === "--completions")).toEqual([])
    expect(completionScript(shell)).not.toMatch(/wizard|log-level/)
  })

  it("completes values: the harnesses, the layouts, files for --prompt-file; a free value offers nothing", () => {
    expect(words(shell, "spool ralph --harness ")).toEqual(sorted(harnessNames))
    expect(words(shell, "spool ralph --harness=c")).toEqual(sorted(harnessNames.filter((name) => name.startsWith("c"))))
    expect(words(shell, "spool loop --layout=")).toEqual(sorted(layoutNames))
    expect(words(shell, `spool ralph --prompt-file ${files}/pro`).map((word) => word.replace(/^.*\//, ""))).toEqual(["prompt.md"])
    expect(words(shell, "spool ralph --max-iterations ")).toEqual([])
    expect(words(shell, "spool ralph --change=")).toEqual([])
    // A harness's name alone would end the word before its `:<model>`.
    expect(words(shell, "spool ralph --fallback ")).toEqual([])
  })

  it("offers an option only until it is given, under any spelling, unless it may be repeated", () => {
    expect(words(shell, "spool ralph --max-iterations 5 --max-it")).toEqual([])
    expect(words(shell, "spool ralph --max-iterations=5 --max-it")).toEqual([])
    expect(words(shell, "spool ralph -m 002 --mod")).toEqual(["--model"])
    expect(words(shell, "spool ralph --yolo --allow")).toEqual(["--allow-host"])
    expect(words(shell, "spool ralph -c 001 --change 002 --cha")).toEqual(["--change"])
    expect(words(shell, "spool ralph --verify true --veri")).toEqual(["--verify", "--verify-timeout"])
    expect(words(shell, "spool ralph --fallback codex --rotate --fallback=pi --fall")).toEqual(["--fallback"])
    expect(words(shell, "spool ralph --rotate --rot")).toEqual([])
  })

  it("offers nothing for the prompt's words, options between them, and no option after --", () => {
    expect(words(shell, "spool ralph fix ")).toEqual([])
    expect(words(shell, "spool ralph fix it --max-it")).toEqual(["--max-iterations"])
    expect(words(shell, "spool ralph -- --max")).toEqual([])
    expect(words(shell, "spool ralph -c 001 -- -")).toEqual([])
  })
})

describe("the completion scripts as files", () => {
  it("are valid scripts of their shells", () => {
    run("bash", ["-n", scripts.bash])
    run("zsh", ["-n", scripts.zsh])
    run("fish", ["--no-config", "-n", scripts.fish])
  })

  it("zsh: works sourced (after compinit) as well as autoloaded from $fpath", () => {
    expect(run("zsh", ["-f", zshComplete, "source", scripts.zsh, "spool ralph --max-it"]).map((line) => line.split("\t")[0])).toEqual([
      "--max-iterations"
    ])
  })

  it("bash: completes in bash's own line editor, registered with complete -F, '=' splitting words as readline does", () => {
    const after = (typed: string) => run("zsh", ["-f", bashReadline, scripts.bash, typed])[0]
    expect(after("spool lo")).toBe("spool loop ")
    expect(after("spool ralph --max-it")).toBe("spool ralph --max-iterations ")
    expect(after("spool ralph --comp")).toBe("spool ralph --completion-promise ")
    expect(after("spool --completions=z")).toBe("spool --completions=zsh ")
    expect(after("spool ralph --max-iterations=5 --max-it")).toBe("spool ralph --max-iterations=5 --max-it")
  })

  it("bash: completes --name=value where '=' does not split words too", () => {
    expect(bash(bashWords("spool --completions=z", false))).toEqual(["--completions=zsh"])
    expect(bash(bashWords("spool ralph --harness=cl", false))).toEqual(["--harness=claude"])
  })
})
