import { CliConfig, CommandDescriptor } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { RequestError } from "@spool/app"
import * as Invocation from "@spool/app/host"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { readCommandLine } from "../src/CommandLine.js"
import { ralph } from "../src/commands/ralph.js"
import { ITO_VALIDATION, itoValidationCommands } from "../src/ralph/ItoValidation.js"
import { ralphOptionSpecs, withTarget } from "../src/ralph/Options.js"
import { loopRequest } from "../src/ralph/Requests.js"
import { applySettings, readSettings, type Settings, SettingsOrigin } from "../src/ralph/Settings.js"
import { decodeSection } from "../src/ralph/SettingsSchema.js"
import { UsageError } from "../src/UsageError.js"

const decode = (section: Record<string, unknown>, lenient = false) =>
  decodeSection(ralphOptionSpecs, section, { file: lenient ? ".ito/config.json" : ".spool/config.json", at: ["ralph"], lenient, rooted: (path) => `/repo/${path}` })
const refusal = (section: Record<string, unknown>, lenient = false) =>
  Either.match(decode(section, lenient), { onLeft: (error) => error.message, onRight: (values) => `decoded ${JSON.stringify(values)}` })

describe("the settings Schema, derived from the option table", () => {
  it("decodes each kind of option into its value as the parser gives it", () => {
    expect(decode({
      "no-commit": true,
      "keep-errors": false,
      verify: "pnpm test",
      notify: ["./a.sh", "./b.sh"],
      "max-iterations": 30,
      "max-cost": 2.5,
      "completion-promise": "DONE",
      model: "anthropic/claude-sonnet"
    })).toEqual(Either.right({
      noCommit: true,
      keepErrors: false,
      verify: ["pnpm test"],
      notify: ["./a.sh", "./b.sh"],
      maxIterations: "30",
      maxCost: Option.some("2.5"),
      completionPromise: "DONE",
      model: Option.some("anthropic/claude-sonnet")
    }))
  })

  it("takes the fallback agents as a list, or one as a string, as written; rotate is a switch", () => {
    expect(decode({ fallback: ["codex:gpt-5.5", "opencode:anthropic/claude-sonnet-4-5"], rotate: true })).toEqual(
      Either.right({ fallback: ["codex:gpt-5.5", "opencode:anthropic/claude-sonnet-4-5"], rotate: true })
    )
    expect(decode({ fallback: "command:node agent.mjs" })).toEqual(Either.right({ fallback: ["command:node agent.mjs"] }))
    expect(refusal({ fallback: [] })).toBe(".spool/config.json: \"ralph\".\"fallback\" must be a list of strings (not empty), e.g. [codex:gpt-5.5], got []")
    expect(refusal({ fallback: ["codex", ""] })).toBe(
      ".spool/config.json: \"ralph\".\"fallback\" must be a list of strings (not empty), e.g. [codex:gpt-5.5], got [\"codex\",\"\"]"
    )
    expect(refusal({ rotate: "yes" })).toBe(".spool/config.json: \"ralph\".\"rotate\" must be true or false, got \"yes\"")
  })

  it("takes an option by its long alias, and reads a path from the repository root", () => {
    expect(decode({ yolo: true, "prompt-file": "prompts/go.md" })).toEqual(Either.right({ allowAll: true, promptFile: Option.some("/repo/prompts/go.md") }))
  })

  it("refuses a value of the wrong kind, naming its key from the decode's path and showing what it got", () => {
    expect(refusal({ "no-commit": "yes" })).toBe(".spool/config.json: \"ralph\".\"no-commit\" must be true or false, got \"yes\"")
    expect(refusal({ "max-iterations": true })).toBe(".spool/config.json: \"ralph\".\"max-iterations\" must be a string or a number, e.g. 20, got true")
    expect(refusal({ model: Number.POSITIVE_INFINITY })).toBe(
      ".spool/config.json: \"ralph\".\"model\" must be a string or a number, e.g. anthropic/claude-sonnet, got null"
    )
    expect(refusal({ deadline: { at: "18:00" } })).toBe(".spool/config.json: \"ralph\".\"deadline\" must be a string or a number, e.g. 5h30m, got {\"at\":\"18:00\"}")
    const list = ".spool/config.json: \"ralph\".\"verify\" must be a list of strings (not empty), e.g. [\"pnpm test\"], got"
    expect(refusal({ verify: ["pnpm test", 3] })).toBe(`${list} ["pnpm test",3]`)
    expect(refusal({ verify: ["pnpm test", " "] })).toBe(`${list} ["pnpm test"," "]`)
    expect(refusal({ verify: [] })).toBe(`${list} []`)
    expect(refusal({ verify: "" })).toBe(`${list} ""`)
    expect(refusal({ yolo: 1 })).toBe(".spool/config.json: \"ralph\".\"yolo\" must be true or false, got 1")
  })

  it("refuses an unknown key with the closest option, or says what the keys are", () => {
    expect(refusal({ "max-iteration": 3 })).toBe(".spool/config.json: unknown key \"ralph\".\"max-iteration\"; did you mean \"max-iterations\"?")
    expect(refusal({ "--verify": "true" })).toBe(".spool/config.json: unknown key \"ralph\".\"--verify\"; did you mean \"verify\"?")
    expect(refusal({ colour: "always" })).toBe(
      ".spool/config.json: unknown key \"ralph\".\"colour\"; the keys are the long options of spool ralph without the leading --"
    )
  })

  it("refuses an action, and one option under two of its names", () => {
    expect(refusal({ status: true })).toBe(".spool/config.json: \"ralph\".\"status\" is an action, not a setting; give --status on the command line")
    expect(refusal({ "add-context": "be brief" })).toBe(
      ".spool/config.json: \"ralph\".\"add-context\" is an action, not a setting; give --add-context on the command line"
    )
    expect(refusal({ "allow-all": true, yolo: true })).toBe(".spool/config.json: \"allow-all\" and \"yolo\" are the same option; keep one")
    expect(refusal({ yolo: true, "dangerously-allow-all": false })).toBe(".spool/config.json: \"yolo\" and \"dangerously-allow-all\" are the same option; keep one")
  })

  it("of several mistakes, says the first in the file's order", () => {
    expect(refusal({ "no-commit": "yes", colour: "always", "max-iterations": true })).toMatch(/^\.spool\/config\.json: "ralph"\."no-commit" must be/)
    expect(refusal({ "max-iterations": true, "no-commit": "yes" })).toMatch(/^\.spool\/config\.json: "ralph"\."max-iterations" must be/)
    expect(refusal({ colour: "always", "no-commit": "yes" })).toMatch(/^\.spool\/config\.json: unknown key "ralph"\."colour"/)
  })

  it("reads another tool's file leniently: its own keys and spool's actions left alone, values of spool's options still checked", () => {
    expect(decode({ validationCommands: ["make check"], status: true, maxIterations: 9, "max-iterations": 3 }, true)).toEqual(
      Either.right({ maxIterations: "3" })
    )
    expect(refusal({ "max-iterations": [3] }, true)).toBe(".ito/config.json: \"ralph\".\"max-iterations\" must be a string or a number, e.g. 20, got [3]")
    expect(refusal({ "allow-all": true, yolo: true }, true)).toBe(".ito/config.json: \"allow-all\" and \"yolo\" are the same option; keep one")
  })
})

describe("ito's validation commands", () => {
  const at = (path: ReadonlyArray<string>, value: unknown): Record<string, unknown> =>
    path.length === 0 ? (value as Record<string, unknown>) : { [path[0]!]: at(path.slice(1), value) }

  it("are found at each place ito looks, a string or a list, trimmed, with the path to them", () => {
    for (const path of ITO_VALIDATION) {
      expect(itoValidationCommands(at(path, ["  make check ", "make lint"]))).toEqual({ commands: ["make check", "make lint"], path })
      expect(itoValidationCommands(at(path, "make check"))).toEqual({ commands: ["make check"], path })
    }
  })

  it("come from the first place in ito's order that holds one; empty ones and other values are skipped", () => {
    const config = {
      validationCommand: "make late",
      ralph: { validationCommands: ["", 3, "  "], validation: { commands: ["make early"] } }
    }
    expect(itoValidationCommands(config)).toEqual({ commands: ["make early"], path: ["ralph", "validation", "commands"] })
    expect(itoValidationCommands({ ralph: { validationCommands: [] }, project: "x" })).toBeNull()
    expect(itoValidationCommands(["make check"])).toBeNull()
  })
})

/** The command line as spool reads and parses it: the parsed options, and the options it names. */
const commandLine = (...argv: Array<string>) =>
  Effect.gen(function*() {
    const request = Either.getOrThrow(readCommandLine(["ralph", ...argv]))
    if (request._tag !== "Run") throw new Error(`not a run: ${request._tag}`)
    const config = CliConfig.make({ isCaseSensitive: true, autoCorrectLimit: 0 })
    const directive = yield* CommandDescriptor.parse(ralph.descriptor, ["ralph", ...request.args], config)
    if (directive._tag !== "UserDefined") throw new Error("a built-in")
    return { parsed: directive.value, given: request.given }
  }).pipe(Effect.provide(NodeContext.layer))

const fromFile = (section: Record<string, unknown>): Settings => {
  const values = Either.getOrThrow(decode(section))
  const places = Object.keys(values).map((field) => {
    const spec = ralphOptionSpecs[field as keyof typeof ralphOptionSpecs]
    return { field: field as keyof typeof ralphOptionSpecs, option: spec.name, file: ".spool/config.json", path: ["ralph", spec.name] }
  })
  return { files: [".spool/config.json"], values, places }
}

describe("settings under the command line", () => {
  it.effect("fill what the command line does not give, option by option, and say where each came from", () =>
    Effect.gen(function*() {
      const { parsed, given } = yield* commandLine("go", "--verify", "true", "--max-iterations", "1", "-c", "001")
      const settings = fromFile({ verify: ["pnpm test", "pnpm lint"], "max-iterations": 2, harness: "command", model: "m", "no-commit": true })
      const { args, source } = applySettings(parsed, given, settings)
      expect([args.verify, args.maxIterations, args.changes, args.prompt]).toEqual([["true"], "1", ["001"], ["go"]])
      expect([args.harness, args.model, args.noCommit]).toEqual(["command", Option.some("m"), true])
      // What neither gives keeps the parser's default.
      expect([args.stallIterations, args.remote, args.worktree]).toEqual(["5", Option.none(), false])
      expect(source).toEqual({ file: ".spool/config.json", fromFile: ["harness", "model", "no-commit"], fromCommandLine: ["verify", "max-iterations", "change"] })
    }))

  it.effect("--fallback and --rotate reach the loop's request: each agent as written, trimmed, in order; the command line's list replaces the file's", () =>
    Effect.gen(function*() {
      const request = (settings: Settings | null, ...argv: Array<string>) =>
        Effect.gen(function*() {
          const { parsed, given } = yield* commandLine("go", "--harness", "claude", ...argv)
          const { args, source } = applySettings(parsed, given, settings)
          return yield* loopRequest(withTarget(args)).pipe(Effect.provideService(SettingsOrigin, source))
        }).pipe(Effect.provide(Layer.mergeAll(NodeContext.layer, Invocation.layerTest(tmpdir()))))
      const cli = yield* request(null, "--fallback", " codex:gpt-5.5 ", "--rotate", "--fallback", "command:node agent.mjs")
      expect([cli.agent.harness, cli.fallback, cli.rotate]).toEqual(["claude", ["codex:gpt-5.5", "command:node agent.mjs"], true])
      const file = fromFile({ fallback: ["opencode:anthropic/claude-sonnet-4-5", "codex"], rotate: true })
      expect(yield* request(file)).toMatchObject({ fallback: ["opencode:anthropic/claude-sonnet-4-5", "codex"], rotate: true })
      expect(yield* request(file, "--fallback", "gemini")).toMatchObject({ fallback: ["gemini"], rotate: true })
      expect(yield* request(null)).toMatchObject({ fallback: [], rotate: false })
    }))

  it.effect("a file that gives nothing the command line does not is still the run's file", () =>
    Effect.gen(function*() {
      const { parsed, given } = yield* commandLine("--max-iterations", "1")
      const { args, source } = applySettings(parsed, given, fromFile({ "max-iterations": 2 }))
      expect(args.maxIterations).toBe("1")
      expect(source).toEqual({ file: ".spool/config.json", fromFile: [], fromCommandLine: ["max-iterations"] })
      expect(applySettings(parsed, given, null).source).toEqual({ file: null, fromFile: [], fromCommandLine: ["max-iterations"] })
    }))

  it.effect("a mistake in a value the file gave names the file and the key; one in a value of the command line does not", () =>
    Effect.gen(function*() {
      const { parsed, given } = yield* commandLine("--max-iterations", "1")
      const settings = fromFile({ "max-iterations": 2, "lease-ttl": "soon", webhook: ["x"] })
      const { blame } = applySettings(parsed, given, settings)
      expect(blame(new UsageError({ message: "--lease-ttl must be a duration", option: "lease-ttl" }))).toEqual(
        new UsageError({ message: ".spool/config.json, \"ralph\".\"lease-ttl\": --lease-ttl must be a duration", option: "lease-ttl" })
      )
      expect(blame(new RequestError({ message: "--webhook (the first) must be a URL", option: "webhook" }))).toEqual(
        new RequestError({ message: ".spool/config.json, \"ralph\".\"webhook\": --webhook (the first) must be a URL", option: "webhook" })
      )
      const own = new UsageError({ message: "--max-iterations must be a positive whole number", option: "max-iterations" })
      expect(blame(own)).toBe(own)
      // Words alone attribute nothing: the error names no option.
      const unattributed = new UsageError({ message: "--lease-ttl goes with --remote" })
      expect(blame(unattributed)).toBe(unattributed)
    }))
})

describe("the repository's settings files", () => {
  const repository = (files: Record<string, unknown>) => {
    const root = mkdtempSync(join(tmpdir(), "spool-settings-"))
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(join(root, file, ".."), { recursive: true })
      writeFileSync(join(root, file), typeof content === "string" ? content : JSON.stringify(content))
    }
    return root
  }
  const read = (root: string, layout: string | null = null) => readSettings(root, layout).pipe(Effect.provide(NodeContext.layer))

  it.effect("in an ito tree, ito's validation commands are --verify, spool's file wins option by option, and each says where it is", () =>
    Effect.gen(function*() {
      const root = repository({
        ".ito/config.json": { project: { validationCommand: "make check" }, ralph: { "max-iterations": 7, model: "ito/model", "ito-only": 1 } },
        ".spool/config.json": { tools: {}, ralph: { "prompt-file": "prompt.md", "max-iterations": 3 } }
      })
      const settings = yield* read(root)
      expect(settings?.files).toEqual([".spool/config.json", ".ito/config.json"])
      expect(settings?.values).toEqual({ promptFile: Option.some(join(root, "prompt.md")), maxIterations: "3", model: Option.some("ito/model"), verify: ["make check"] })
      expect(settings?.places.map((place) => [place.option, place.file, place.path])).toEqual([
        ["prompt-file", ".spool/config.json", ["ralph", "prompt-file"]],
        ["max-iterations", ".spool/config.json", ["ralph", "max-iterations"]],
        ["model", ".ito/config.json", ["ralph", "model"]],
        ["verify", ".ito/config.json", ["project", "validationCommand"]]
      ])
      const { blame } = applySettings((yield* commandLine()).parsed, [], settings)
      expect(blame(new UsageError({ message: "--verify: bad", option: "verify" })).message).toBe(".ito/config.json, \"project\".\"validationCommand\": --verify: bad")
    }))

  it.effect("ito's own verify in its ralph section wins over its validation commands", () =>
    Effect.gen(function*() {
      const root = repository({ ".ito/config.json": { validationCommands: ["make check"], ralph: { verify: "make test" } } })
      const settings = yield* read(root)
      expect([settings?.values.verify, settings?.places.map((place) => place.path)]).toEqual([["make test"], [["ralph", "verify"]]])
    }))

  it.effect("\"sandbox\" may hold the sandbox's additions: read as the switch and its options, in the file's order, each named where it stands", () =>
    Effect.gen(function*() {
      const root = repository({
        ".spool/config.json": { ralph: { "max-iterations": 3, sandbox: { "allow-host": "registry.npmjs.org", "deny-read": ["~/private", "secrets"], "pass-env": "NPM_TOKEN" }, harness: "command" } }
      })
      const settings = yield* read(root)
      expect(settings?.values).toEqual({
        maxIterations: "3",
        sandbox: true,
        allowHost: ["registry.npmjs.org"],
        denyRead: ["~/private", join(root, "secrets")],
        passEnv: ["NPM_TOKEN"],
        harness: "command"
      })
      expect(settings?.places.map((place) => place.path)).toEqual([
        ["ralph", "max-iterations"],
        ["ralph", "sandbox"],
        ["ralph", "sandbox", "allow-host"],
        ["ralph", "sandbox", "deny-read"],
        ["ralph", "sandbox", "pass-env"],
        ["ralph", "harness"]
      ])
      const { blame } = applySettings((yield* commandLine()).parsed, [], settings)
      expect(blame(new UsageError({ message: "--pass-env: bad", option: "pass-env" })).message).toBe(".spool/config.json, \"ralph\".\"sandbox\".\"pass-env\": --pass-env: bad")
      expect((yield* read(repository({ ".spool/config.json": { ralph: { sandbox: false } } })))?.values).toEqual({})
    }))

  it.effect("a key in \"sandbox\" that is not one of its additions, one given there and beside it, or a value of the wrong kind there, is one line naming where it stands", () =>
    Effect.gen(function*() {
      const failure = (ralph: unknown) => Effect.map(Effect.flip(read(repository({ ".spool/config.json": { ralph } }))), (error) => error.message)
      expect(yield* failure({ sandbox: { verify: "true" } })).toBe(
        ".spool/config.json: unknown key \"ralph\".\"sandbox\".\"verify\"; the keys there are allow-host, deny-read, pass-env"
      )
      expect(yield* failure({ "allow-host": "a.example", sandbox: { "allow-host": "b.example" } })).toBe(
        ".spool/config.json: \"ralph\".\"sandbox\".\"allow-host\" and \"ralph\".\"allow-host\" are the same option; keep one"
      )
      expect(yield* failure({ sandbox: { "pass-env": [] } })).toMatch(/^\.spool\/config\.json: "ralph"\."sandbox"\."pass-env" must be a list of strings \(not empty\)/)
    }))

  it.effect("a broken file or a section that is no object is one line naming the file; no file is nothing to read", () =>
    Effect.gen(function*() {
      const failure = (root: string) => Effect.map(Effect.flip(read(root)), (error) => error.message)
      expect(yield* failure(repository({ ".ito/config.json": {}, ".spool/config.json": "{ \"ralph\": " }))).toMatch(
        /^\.spool\/config\.json is not valid JSON \(.*\); fix the file$/
      )
      expect(yield* failure(repository({ ".ito/config.json": {}, ".spool/config.json": { ralph: ["--verify", "true"] } }))).toBe(
        ".spool/config.json: \"ralph\" must be an object of spool ralph options, e.g. {\"ralph\": {\"verify\": [\"pnpm test\"]}}; got [\"--verify\",\"true\"]"
      )
      expect(yield* read(repository({ ".ito/config.json": { ralph: "ito's own" } }))).toBeNull()
    }))
})
