import { FileSystem, Path } from "@effect/platform"
import { type SettingsSource, Workspace } from "@spool/core"
import { Context, Effect, Either } from "effect"
import type { CommandSpec } from "../Commands.js"
import type { OptionSpec } from "../OptionSpec.js"
import { closest } from "../Suggest.js"
import { UsageError } from "../UsageError.js"

/** The repository's settings file, relative to its root; its `ralph` section holds options of `spool ralph`. */
export const SETTINGS_FILE = ".spool/config.json"
const SECTION = "ralph"

/** Where the options of the running command came from, for the state file and `--status`. */
export class SettingsOrigin extends Context.Tag("@spool/cli/SettingsOrigin")<SettingsOrigin, SettingsSource>() {}

/** One option the settings file sets: as the command line would give it, `--name value` (repeated for a list) or `--name`. */
interface Setting {
  readonly key: string
  readonly spec: OptionSpec
  readonly values: ReadonlyArray<string> | "on"
}

interface Settings {
  readonly file: string
  readonly settings: ReadonlyArray<Setting>
}

const bad = (message: string) => new UsageError({ message: `${SETTINGS_FILE}: ${message}` })
const badFile = (message: string) => new UsageError({ message: `${SETTINGS_FILE} ${message}` })
const keyName = (key: string) => `"${SECTION}"."${key}"`
const show = (value: unknown) => JSON.stringify(value) ?? String(value)

/** A value of the settings file as the option's values, or why it is of the wrong kind. */
const readValue = (key: string, spec: OptionSpec, value: unknown): Either.Either<ReadonlyArray<string> | "on" | null, UsageError> => {
  if (spec.kind === "switch") {
    return typeof value === "boolean"
      ? Either.right(value ? "on" : null)
      : Either.left(bad(`${keyName(key)} must be true or false, got ${show(value)}`))
  }
  const one = (item: unknown) =>
    typeof item === "string" ? item : typeof item === "number" && Number.isFinite(item) ? String(item) : null
  if (spec.repeatable === true) {
    const items = typeof value === "string" ? [value] : Array.isArray(value) ? value : null
    const texts = items?.map((item) => (typeof item === "string" ? item : null))
    return texts !== undefined && texts.every((text) => text !== null && text.trim() !== "")
      ? Either.right(texts as Array<string>)
      : Either.left(bad(`${keyName(key)} must be a list of strings (not empty), e.g. [${spec.example ?? "\"...\""}], got ${show(value)}`))
  }
  const text = one(value)
  return text !== null
    ? Either.right([text])
    : Either.left(bad(`${keyName(key)} must be a string or a number, e.g. ${spec.example ?? spec.default ?? "\"...\""}, got ${show(value)}`))
}

/** Reads the settings of `command` from the file's section: every key an option of the command, every value of its kind. */
const readSection = (command: CommandSpec, section: Record<string, unknown>): Either.Either<ReadonlyArray<Setting>, UsageError> => {
  const specs = Object.values(command.options)
  const byKey = new Map(specs.flatMap((spec) => [spec.name, ...(spec.aliases ?? []).filter((a) => a.length > 1)].map((key) => [key, spec] as const)))
  const settings: Array<Setting> = []
  for (const [key, value] of Object.entries(section)) {
    const spec = byKey.get(key)
    if (spec === undefined) {
      const settable = specs.filter((s) => s.action !== true).map((s) => s.name)
      const suggestion = closest(key.replace(/^-+/, ""), settable)
      return Either.left(bad(
        `unknown key ${keyName(key)}; ${suggestion === null ? "the keys are the long options of spool ralph without the leading --" : `did you mean "${suggestion}"?`}`
      ))
    }
    if (spec.action === true) {
      return Either.left(bad(`${keyName(key)} is an action, not a setting; give --${spec.name} on the command line`))
    }
    const earlier = settings.find((setting) => setting.spec === spec)
    if (earlier !== undefined) return Either.left(bad(`"${earlier.key}" and "${key}" are the same option; keep one`))
    const values = readValue(key, spec, value)
    if (Either.isLeft(values)) return Either.left(values.left)
    if (values.right !== null && values.right.length !== 0) settings.push({ key, spec, values: values.right })
  }
  return Either.right(settings)
}

/**
 * The `ralph` section of the repository's settings file, checked: null when there is no file or
 * no section. The file's other keys are spool's other settings and are left alone.
 */
export const readSettings = (command: CommandSpec, cwd: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    // Without a repository there is nothing to read; the command says what is missing.
    const root = yield* Effect.either(Effect.map(Workspace, (workspace) => workspace.root).pipe(Effect.provide(Workspace.layer(cwd))))
    if (Either.isLeft(root)) return null
    const file = path.join(root.right, SETTINGS_FILE)
    const exists = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    if (!exists) return null
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) => badFile(`cannot be read (${error.message}); check its permissions`))
    )
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return yield* badFile(`is not valid JSON (${(error as Error).message}); fix the file`)
    }
    if (typeof json !== "object" || json === null || Array.isArray(json)) return yield* badFile("must hold a JSON object; fix the file")
    if (!(SECTION in json)) return null
    const section = (json as Record<string, unknown>)[SECTION]
    if (typeof section !== "object" || section === null || Array.isArray(section)) {
      return yield* bad(`"${SECTION}" must be an object of spool ralph options, e.g. {"${SECTION}": {"verify": ["pnpm test"]}}; got ${show(section)}`)
    }
    const settings = yield* readSection(command, section as Record<string, unknown>)
    // A path in the file is the repository's: it is read from the repository root, wherever spool runs.
    const rooted = settings.map((setting) =>
      setting.spec.kind === "value" && setting.spec.pseudo === "path" && setting.values !== "on"
        ? { ...setting, values: setting.values.map((value) => path.resolve(root.right, value)) }
        : setting
    )
    return { file: SETTINGS_FILE, settings: rooted } satisfies Settings
  })

/** The options named on a checked command line (`--name [value] ... -- operands`), by their names. */
const givenOptions = (command: CommandSpec, args: ReadonlyArray<string>) => {
  const byName = new Map<string, OptionSpec>(Object.values(command.options).map((spec) => [`--${spec.name}`, spec]))
  const given: Array<string> = []
  for (let i = 0; i < args.length && args[i] !== "--"; i++) {
    const spec = byName.get(args[i]!)
    if (spec === undefined) continue
    if (!given.includes(spec.name)) given.push(spec.name)
    if (spec.kind === "value") i++
  }
  return given
}

/**
 * The command line with the settings it does not give itself: the command line wins, option by
 * option. Also says where each came from.
 */
export const applySettings = (command: CommandSpec, args: ReadonlyArray<string>, settings: Settings | null) => {
  const given = givenOptions(command, args)
  const taken = (settings?.settings ?? []).filter((setting) => !given.includes(setting.spec.name))
  const added = taken.flatMap((setting) =>
    setting.values === "on" ? [`--${setting.spec.name}`] : setting.values.flatMap((value) => [`--${setting.spec.name}`, value])
  )
  const source: SettingsSource = {
    file: settings?.file ?? null,
    fromFile: taken.map((setting) => setting.spec.name),
    fromCommandLine: given
  }
  return { args: [...added, ...args], source }
}

/** A mistake in a value the settings file gave is the file's: the message names it and the key. */
export const blameSettings = (source: SettingsSource) => (error: UsageError) => {
  const key = source.fromFile.find((name) => new RegExp(`--${name}(?![\\w-])`).test(error.message))
  return source.file === null || key === undefined
    ? error
    : new UsageError({ message: `${source.file}, ${keyName(key)}: ${error.message}` })
}
