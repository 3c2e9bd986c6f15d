import { CliConfig, CommandDescriptor } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { readCommandLine } from "../src/CommandLine.js"
import { ralph } from "../src/commands/ralph.js"
import { closest } from "@spool/app"

const request = (...args: Array<string>) => Either.getOrThrow(readCommandLine(args))
const error = (...args: Array<string>) => Either.getOrThrowWith(Either.flip(readCommandLine(args)), () => new Error("no error")).message

describe("reading the command line", () => {
  it("hands the parser the options first, then -- and the prompt words", () => {
    expect(request("ralph", "do", "--max-iterations=3", "it", "-c", "002", "--yolo")).toMatchObject({
      _tag: "Run",
      args: ["--max-iterations", "3", "--change", "002", "--allow-all", "--", "do", "it"]
    })
  })

  it("leaves a word after a switch in the prompt, even one that reads as a boolean", () => {
    expect(request("ralph", "--allow-all", "yes", "please")).toMatchObject({ args: ["--allow-all", "--", "yes", "please"] })
  })

  it("takes every word after -- as a prompt word, dashes and all", () => {
    expect(request("loop", "-c", "002", "--", "--status", "-x")).toMatchObject({
      _tag: "Run",
      command: { name: "loop" },
      args: ["--change", "002", "--", "--status", "-x"]
    })
  })

  it("answers help and version itself, wherever they stand before --", () => {
    expect(request()).toEqual({ _tag: "RootHelp" })
    expect(request("--help")).toEqual({ _tag: "RootHelp" })
    expect(request("ralph", "--change", "x", "-h")).toMatchObject({ _tag: "CommandHelp", command: { name: "ralph" } })
    expect(request("ralph", "--version")).toEqual({ _tag: "Version" })
    expect(request("ralph", "--", "--help")).toMatchObject({ _tag: "Run", args: ["--", "--help"] })
    expect(request("--completions=zsh")).toEqual({ _tag: "Completions", shell: "zsh" })
  })

  it("takes a value that starts with a dash when it names no option", () => {
    expect(request("ralph", "--add-context", "-x marks the spot")).toMatchObject({ args: ["--add-context", "-x marks the spot", "--"] })
  })

  it("names the options given, by their long names, once each, in the order given", () => {
    expect(request("ralph", "go", "-c", "002", "--yolo", "--verify", "a", "--max-iterations=3", "--verify", "b", "--", "--model")).toMatchObject({
      given: ["change", "allow-all", "verify", "max-iterations"]
    })
    expect(request("ralph", "--", "--status")).toMatchObject({ given: [] })
  })

  it("explains each mistake in one line", () => {
    expect(error("ralph", "--max-iteration", "3")).toBe("unknown option '--max-iteration'; did you mean --max-iterations?")
    expect(error("ralf")).toBe("unknown command 'ralf'; did you mean spool ralph?")
    expect(error("ralph", "--allow-all=maybe")).toBe("--allow-all takes no value; write --allow-all alone, without '=maybe'")
    expect(error("ralph", "--model")).toBe("--model needs a value, e.g. --model anthropic/claude-sonnet")
  })
})

/*
 * Why argv is read before @effect/cli parses it: @effect/cli 0.77 alone, given spool's command as
 * typed, lets each of these through without a word, and a typo would start a paid loop on a wrong
 * prompt. The day this test fails, @effect/cli refuses them itself, and the reading in front can go.
 */
describe("what @effect/cli alone would let through", () => {
  const alone = (...args: Array<string>) =>
    CommandDescriptor.parse(ralph.descriptor, ["ralph", ...args], CliConfig.make({ isCaseSensitive: true })).pipe(
      Effect.map((directive) => directive._tag === "UserDefined" ? { prompt: directive.value.prompt } : { builtIn: true }),
      Effect.provide(NodeContext.layer),
      Effect.runPromise
    )

  it("takes a mistyped option and its value for prompt words; spool names the option meant", async () => {
    expect(await alone("--chang", "002", "fix it")).toEqual({ prompt: ["--chang", "002", "fix it"] })
    expect(error("ralph", "--chang", "002", "fix it")).toBe("unknown option '--chang'; did you mean --change?")
  })

  it("drops an option given no value, and takes an option given twice for prompt words; spool refuses both", async () => {
    expect(await alone("fix it", "--change")).toEqual({ prompt: ["fix it"] })
    expect(error("ralph", "fix it", "--change")).toBe("--change needs a value, e.g. --change 002-01")
    expect(await alone("--model", "a/one", "--model", "b/two")).toEqual({ prompt: ["--model", "b/two"] })
    expect(error("ralph", "--model", "a/one", "--model", "b/two")).toBe("--model is given twice; give it once")
  })

  it("reads a value given to a switch, and an option written with = before --, as it likes; spool reads them as --help says", async () => {
    expect(await alone("--status=yes")).toEqual({ prompt: [] })
    expect(error("ralph", "--status=yes")).toBe("--status takes no value; write --status alone, without '=yes'")
    expect(await alone("--change=002", "--", "fix it")).toEqual({ prompt: ["--change=002", "fix it"] })
    expect(request("ralph", "--change=002", "--", "fix it")).toMatchObject({ args: ["--change", "002", "--", "fix it"] })
  })
})

describe("suggestions", () => {
  it("names the closest candidate when it is close enough to be what was meant", () => {
    expect(closest("--max-iteration", ["--max-iterations", "--min-iterations"])).toBe("--max-iterations")
    expect(closest("--inactivity", ["--inactivity-timeout", "--status"])).toBe("--inactivity-timeout")
    expect(closest("ralf", ["ralph", "loop"])).toBe("ralph")
    expect(closest("deploy", ["ralph", "loop"])).toBeNull()
    expect(closest("foo", ["ralph", "loop"])).toBeNull()
  })
})
