import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { readCommandLine } from "../src/CommandLine.js"
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

describe("suggestions", () => {
  it("names the closest candidate when it is close enough to be what was meant", () => {
    expect(closest("--max-iteration", ["--max-iterations", "--min-iterations"])).toBe("--max-iterations")
    expect(closest("--inactivity", ["--inactivity-timeout", "--status"])).toBe("--inactivity-timeout")
    expect(closest("ralf", ["ralph", "loop"])).toBe("ralph")
    expect(closest("deploy", ["ralph", "loop"])).toBeNull()
    expect(closest("foo", ["ralph", "loop"])).toBeNull()
  })
})
