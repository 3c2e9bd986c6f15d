import { FileSystem, Path } from "@effect/platform"
import { findTrees, layoutNames, SETTINGS_FILE, type SettingsSource, shapes } from "@spool/core"
import { RequestError } from "@spool/app"
import { Context, Effect, Either, Option } from "effect"
import type { ValueOf } from "../EffectOptions.js"
import { UsageError } from "../UsageError.js"
import { itoValidationCommands } from "./ItoValidation.js"
import { ralphOptionSpecs as specs } from "./Options.js"
import { expandSandbox } from "./SandboxSetting.js"
import { decodeSection, placeOf, type SettingsOf, settingKeys } from "./SettingsSchema.js"

/** The repository's settings file, relative to its root; its `ralph` section holds options of `spool ralph`. */
export { SETTINGS_FILE }
const SECTION = "ralph"

/** Where the options of the running command came from, for the state file and `--status`. */
export class SettingsOrigin extends Context.Tag("@spool/cli/SettingsOrigin")<SettingsOrigin, SettingsSource>() {}

/** An option a settings file gives, and where: the file, and the path to the key that gives it. */
export interface SettingPlace {
  /** Its field in the option table. */
  readonly field: keyof typeof specs
  /** Its long name. */
  readonly option: string
  /** The file, relative to the root. */
  readonly file: string
  readonly path: ReadonlyArray<string>
}

/** What a settings file gives spool ralph, decoded: the options' values, and where each came from, in the file's order. */
interface Given {
  readonly values: SettingsOf<typeof specs>
  readonly places: ReadonlyArray<SettingPlace>
}

/** What the repository's settings files give spool ralph, decoded. */
export interface Settings extends Given {
  /** The files read that have something for spool ralph, relative to the root. */
  readonly files: ReadonlyArray<string>
}

/** A path the file gives, from the repository root; one under the home directory (`~/...`) stays so, for the option to read. */
const fromRoot = (path: Path.Path, root: string) => (given: string) => (given === "~" || given.startsWith("~/") ? given : path.resolve(root, given))

const show = (value: unknown) => JSON.stringify(value) ?? String(value)
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A file's section, decoded: the options it gives and the keys that give them, in the file's
 * order. A switch set to false gives nothing: it is off unless given.
 */
const sectionIn = (
  file: string,
  given: Record<string, unknown>,
  options: { readonly lenient: boolean; readonly rooted: (path: string) => string }
): Either.Either<Given, UsageError> =>
  Either.flatMap(expandSandbox(given, file, [SECTION]), ({ section, paths }) => sectionOf(file, section, paths, options))

const sectionOf = (
  file: string,
  section: Record<string, unknown>,
  paths: Readonly<Record<string, ReadonlyArray<string>>>,
  options: { readonly lenient: boolean; readonly rooted: (path: string) => string }
): Either.Either<Given, UsageError> =>
  Either.map(decodeSection(specs, section, { ...options, file, at: [SECTION], paths }), (decoded) => {
    const keys = Object.keys(section)
    const values: Record<string, unknown> = decoded
    const places = Object.entries(specs).flatMap(([field, spec]): Array<SettingPlace> => {
      const key = settingKeys(spec).find((key) => Object.hasOwn(section, key))
      return key === undefined || values[field] === undefined || values[field] === false
        ? []
        : [{ field: field as keyof typeof specs, option: spec.name, file, path: [SECTION, ...(paths[key] ?? [key])] }]
    }).sort((a, b) => keys.indexOf(a.path[1]!) - keys.indexOf(b.path[1]!))
    return { values: Object.fromEntries(places.map((place) => [place.field, values[place.field]])), places }
  })

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
    if (!isObject(json)) return yield* badFile("must hold a JSON object; fix the file")
    return json
  })

/** The `ralph` section of spool's own settings file, checked strictly: every key an option. */
const spoolSettings = (root: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const json = yield* readJsonFile(SETTINGS_FILE, path.join(root, SETTINGS_FILE))
    if (json === null || !(SECTION in json)) return null
    const section = json[SECTION]
    if (!isObject(section)) {
      return yield* new UsageError({
        message: `${SETTINGS_FILE}: "${SECTION}" must be an object of spool ralph options, e.g. {"${SECTION}": {"verify": ["pnpm test"]}}; got ${show(section)}`
      })
    }
    return yield* sectionIn(SETTINGS_FILE, section, { lenient: false, rooted: fromRoot(path, root) })
  })

/**
 * An ito repository's `.ito/config.json`, read as ito reads it: of its `ralph` section, what spool
 * also has applies (its validation commands are `--verify`); keys spool does not know are ito's own
 * and are left alone.
 */
const itoSettings = (root: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const file = shapes.ito.nativeSettings!
    const json = yield* readJsonFile(file, path.join(root, ...file.split("/")))
    if (json === null) return null
    const section = json[SECTION]
    const own = isObject(section)
      ? yield* sectionIn(file, section, { lenient: true, rooted: fromRoot(path, root) })
      : { values: {}, places: [] }
    const validation = itoValidationCommands(json)
    if (validation === null || own.values.verify !== undefined) return own.places.length === 0 && !isObject(section) ? null : own
    return {
      values: { ...own.values, verify: [...validation.commands] },
      places: [...own.places, { field: "verify", option: specs.verify.name, file, path: validation.path }]
    } satisfies Given
  })

/**
 * The repository's settings for spool ralph, decoded: the `ralph` section of
 * `.spool/config.json` (its other keys are spool's other settings and are left alone) and, for an
 * ito tree, what `.ito/config.json` says that spool also has; `.spool/config.json` wins over it,
 * option by option. Null when there is nothing to read. The tree is found as the command will find
 * it: the one `--layout` names (`layout`), the one the file names, or the only one there.
 */
export const readSettings = (cwd: string, layout: string | null) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const given = layoutNames.find((name) => name === layout?.trim()) ?? null
    // Without a repository there is nothing to read; the command says what is missing.
    const trees = yield* findTrees(fs, path, cwd, given)
    if (trees === null) return null
    const own = yield* spoolSettings(trees.root)
    const named = Option.getOrNull(own?.values.layout ?? Option.none())?.trim()
    const chosen = given ?? layoutNames.find((name) => named === name) ??
      (trees.found.length === 1 ? trees.found[0]! : null)
    const native = chosen === "ito" && trees.found.includes("ito") ? yield* itoSettings(trees.root) : null
    if (own === null && native === null) return null
    const places = [...own?.places ?? [], ...(native?.places ?? []).filter((place) => !own?.places.some((mine) => mine.field === place.field))]
    const files = [...(own === null ? [] : [SETTINGS_FILE]), ...(native === null ? [] : [shapes.ito.nativeSettings!])]
    return { files, values: { ...native?.values, ...own?.values }, places } satisfies Settings
  })

/**
 * The parsed command line with the settings it does not give itself (`given`: the options it
 * names, by their long names): the command line wins, option by option. Also says where each came
 * from, and `blame`s a mistake in a value the file gave on the file.
 */
export const applySettings = <A extends { readonly [K in keyof typeof specs]: ValueOf<(typeof specs)[K]> }>(
  parsed: A,
  given: ReadonlyArray<string>,
  settings: Settings | null
) => {
  const taken = (settings?.places ?? []).filter((place) => !given.includes(place.option))
  const values: Record<string, unknown> = settings?.values ?? {}
  const args: A = { ...parsed, ...Object.fromEntries(taken.map((place) => [place.field, values[place.field]])) }
  const files = [...new Set(taken.map((place) => place.file))]
  const source: SettingsSource = {
    file: files.length === 0 ? (settings?.files[0] ?? null) : files.join(", "),
    fromFile: taken.map((place) => place.option),
    fromCommandLine: [...given]
  }
  /** A mistake in a value the settings file gave is the file's: the message names it and the key. */
  const blame = <E extends UsageError | RequestError>(error: E): E => {
    const place = error.option === undefined ? undefined : taken.find((place) => place.option === error.option)
    if (place === undefined) return error
    const fields = { message: `${place.file}, ${placeOf(place.path)}: ${error.message}`, option: error.option }
    return (error._tag === "UsageError" ? new UsageError(fields) : new RequestError(fields)) as E
  }
  return { args, source, blame }
}
