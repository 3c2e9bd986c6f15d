import { FileSystem, Path } from "@effect/platform"
import { findTrees, type LayoutName, layoutNames, SETTINGS_FILE, type SettingsSource, shapes } from "@spool/core"
import { Context, Effect, Either } from "effect"
import type { CommandSpec } from "../Commands.js"
import type { OptionSpec } from "../OptionSpec.js"
import { closest, RequestError } from "@spool/app"
import { UsageError } from "../UsageError.js"

/** The repository's settings file, relative to its root; its `ralph` section holds options of `spool ralph`. */
export { SETTINGS_FILE }
const SECTION = "ralph"

/** Where the options of the running command came from, for the state file and `--status`. */
export class SettingsOrigin extends Context.Tag("@spool/cli/SettingsOrigin")<SettingsOrigin, SettingsSource>() {}

/** One option the settings file sets: as the command line would give it, `--name value` (repeated for a list) or `--name`. */
interface Setting {
  readonly key: string
  readonly spec: OptionSpec
  readonly values: ReadonlyArray<string> | "on"
  /** The file it came from, relative to the root. */
  readonly file: string
}

interface Settings {
  /** The files read that have something for spool ralph, relative to the root. */
  readonly files: ReadonlyArray<string>
  readonly settings: ReadonlyArray<Setting>
}

const keyName = (key: string) => `"${SECTION}"."${key}"`
const show = (value: unknown) => JSON.stringify(value) ?? String(value)

/** A value of the settings file as the option's values, or why it is of the wrong kind. */
const readValue = (file: string, key: string, spec: OptionSpec, value: unknown): Either.Either<ReadonlyArray<string> | "on" | null, UsageError> => {
  const bad = (message: string) => new UsageError({ message: `${file}: ${message}` })
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

/**
 * Reads the settings of `command` from the file's section: every key an option of the command,
 * every value of its kind. A tree's own file (`lenient`) keeps keys of its own, which are left alone.
 */
const readSection = (
  command: CommandSpec,
  file: string,
  section: Record<string, unknown>,
  lenient = false
): Either.Either<ReadonlyArray<Setting>, UsageError> => {
  const bad = (message: string) => new UsageError({ message: `${file}: ${message}` })
  const specs = Object.values(command.options)
  const byKey = new Map(specs.flatMap((spec) => [spec.name, ...(spec.aliases ?? []).filter((a) => a.length > 1)].map((key) => [key, spec] as const)))
  const settings: Array<Setting> = []
  for (const [key, value] of Object.entries(section)) {
    const spec = byKey.get(key)
    if (spec === undefined && lenient) continue
    if (spec === undefined) {
      const settable = specs.filter((s) => s.action !== true).map((s) => s.name)
      const suggestion = closest(key.replace(/^-+/, ""), settable)
      return Either.left(bad(
        `unknown key ${keyName(key)}; ${suggestion === null ? "the keys are the long options of spool ralph without the leading --" : `did you mean "${suggestion}"?`}`
      ))
    }
    if (spec.action === true) {
      if (lenient) continue
      return Either.left(bad(`${keyName(key)} is an action, not a setting; give --${spec.name} on the command line`))
    }
    const earlier = settings.find((setting) => setting.spec === spec)
    if (earlier !== undefined) return Either.left(bad(`"${earlier.key}" and "${key}" are the same option; keep one`))
    const values = readValue(file, key, spec, value)
    if (Either.isLeft(values)) return Either.left(values.left)
    if (values.right !== null && values.right.length !== 0) settings.push({ key, spec, values: values.right, file })
  }
  return Either.right(settings)
}

/**
 * Where ito looks for a project's validation commands in its config, in its order: the first that
 * holds a command wins (a string, or a list of strings).
 */
const ITO_VALIDATION = [
  ["ralph", "validationCommands"],
  ["ralph", "validationCommand"],
  ["ralph", "validation", "commands"],
  ["ralph", "validation", "command"],
  ["validationCommands"],
  ["validationCommand"],
  ["project", "validationCommands"],
  ["project", "validationCommand"],
  ["project", "validation", "commands"],
  ["project", "validation", "command"]
] as const

/** ito's validation commands in its config, read as ito reads them: empty ones and other values skipped. */
export const itoValidationCommands = (config: unknown): ReadonlyArray<string> => {
  for (const pointer of ITO_VALIDATION) {
    let value: unknown = config
    for (const key of pointer) value = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined
    const items = typeof value === "string" ? [value] : Array.isArray(value) ? value : []
    const commands = items.flatMap((item) => (typeof item === "string" && item.trim() !== "" ? [item.trim()] : []))
    if (commands.length > 0) return commands
  }
  return []
}

/** The JSON object a settings file holds; null when there is no file. */
const readJsonFile = (file: string, absolute: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const badFile = (message: string) => new UsageError({ message: `${file} ${message}` })
    const exists = yield* fs.exists(absolute).pipe(Effect.orElseSucceed(() => false))
    if (!exists) return null
    const text = yield* fs.readFileString(absolute).pipe(
      Effect.mapError((error) => badFile(`cannot be read (${error.message}); check its permissions`))
    )
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return yield* badFile(`is not valid JSON (${(error as Error).message}); fix the file`)
    }
    if (typeof json !== "object" || json === null || Array.isArray(json)) return yield* badFile("must hold a JSON object; fix the file")
    return json as Record<string, unknown>
  })

/** The `ralph` section of spool's own settings file, checked strictly: every key an option. */
const spoolSettings = (command: CommandSpec, root: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const json = yield* readJsonFile(SETTINGS_FILE, path.join(root, SETTINGS_FILE))
    if (json === null || !(SECTION in json)) return null
    const section = json[SECTION]
    if (typeof section !== "object" || section === null || Array.isArray(section)) {
      return yield* new UsageError({
        message: `${SETTINGS_FILE}: "${SECTION}" must be an object of spool ralph options, e.g. {"${SECTION}": {"verify": ["pnpm test"]}}; got ${show(section)}`
      })
    }
    return yield* readSection(command, SETTINGS_FILE, section as Record<string, unknown>)
  })

/**
 * An ito repository's `.ito/config.json`, read as ito reads it: of its `ralph` section, what spool
 * also has applies (its validation commands are `--verify`); keys spool does not know are ito's own
 * and are left alone.
 */
const itoSettings = (command: CommandSpec, root: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const file = shapes.ito.nativeSettings!
    const json = yield* readJsonFile(file, path.join(root, ...file.split("/")))
    if (json === null) return null
    const section = json[SECTION]
    const own = typeof section === "object" && section !== null && !Array.isArray(section)
      ? yield* readSection(command, file, section as Record<string, unknown>, true)
      : []
    const verify = itoValidationCommands(json)
    const verifySpec = command.options["verify"]
    const settings = verifySpec === undefined || verify.length === 0 || own.some((setting) => setting.spec === verifySpec)
      ? own
      : [...own, { key: "validationCommands", spec: verifySpec, values: verify, file }]
    return settings.length === 0 && typeof section !== "object" ? null : settings
  })

/** `--layout` as the command line gives it, before the command line is parsed; null when absent or not a layout. */
const layoutGiven = (args: ReadonlyArray<string>): LayoutName | null => {
  for (let i = 0; i < args.length && args[i] !== "--"; i++) {
    const value = args[i] === "--layout" ? args[i + 1] : args[i]!.startsWith("--layout=") ? args[i]!.slice(9) : undefined
    if (value !== undefined) return layoutNames.find((name) => name === value.trim()) ?? null
  }
  return null
}

/**
 * The repository's settings, checked: the `ralph` section of `.spool/config.json` (its other keys
 * are spool's other settings and are left alone) and, for an ito tree, what `.ito/config.json` says
 * that spool also has; `.spool/config.json` wins over it, key by key. Null when there is nothing to
 * read. The tree is found as the command will find it: the one `--layout` names (`args`), the one
 * the file names, or the only one there.
 */
export const readSettings = (command: CommandSpec, cwd: string, args: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const given = layoutGiven(args)
    // Without a repository there is nothing to read; the command says what is missing.
    const trees = yield* findTrees(fs, path, cwd, given)
    if (trees === null) return null
    const own = yield* spoolSettings(command, trees.root)
    const named = own?.find((setting) => setting.spec.name === "layout")?.values
    const layout = given ?? layoutNames.find((name) => named !== "on" && named?.[0]?.trim() === name) ??
      (trees.found.length === 1 ? trees.found[0]! : null)
    const native = layout === "ito" && trees.found.includes("ito") ? yield* itoSettings(command, trees.root) : null
    if (own === null && native === null) return null
    const settings = [...own ?? [], ...(native ?? []).filter((setting) => !own?.some((mine) => mine.spec === setting.spec))]
    // A path in the file is the repository's: it is read from the repository root, wherever spool runs.
    const rooted = settings.map((setting) =>
      setting.spec.kind === "value" && setting.spec.pseudo === "path" && setting.values !== "on"
        ? { ...setting, values: setting.values.map((value) => path.resolve(trees.root, value)) }
        : setting
    )
    const files = [...(own === null ? [] : [SETTINGS_FILE]), ...(native === null ? [] : [shapes.ito.nativeSettings!])]
    return { files, settings: rooted } satisfies Settings
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
  const files = [...new Set(taken.map((setting) => setting.file))]
  const source: SettingsSource = {
    file: files.length === 0 ? (settings?.files[0] ?? null) : files.join(", "),
    fromFile: taken.map((setting) => setting.spec.name),
    fromCommandLine: given
  }
  /** A mistake in a value the settings file gave is the file's: the message names it and the key. */
  const blame = <E extends UsageError | RequestError>(error: E): E => {
    const setting = taken.find((setting) => new RegExp(`--${setting.spec.name}(?![\\w-])`).test(error.message))
    if (setting === undefined) return error
    const message = `${setting.file}, ${keyName(setting.key)}: ${error.message}`
    return (error._tag === "UsageError" ? new UsageError({ message }) : new RequestError({ message })) as E
  }
  return { args: [...added, ...args], source, blame }
}
