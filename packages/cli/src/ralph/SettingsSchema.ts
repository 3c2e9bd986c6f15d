import { closest } from "@spool/app"
import { Either, Option, ParseResult, Schema } from "effect"
import type { ValueOf } from "../EffectOptions.js"
import type { OptionSpec } from "../OptionSpec.js"
import { UsageError } from "../UsageError.js"

/** What a settings file gives for the options of a table: each option's value as the parser gives it. */
export type SettingsOf<T extends Record<string, OptionSpec>> = { readonly [K in keyof T]?: ValueOf<T[K]> }

/** The keys a settings file may name an option by: its long name and its long aliases. */
export const settingKeys = (spec: OptionSpec): ReadonlyArray<string> => [spec.name, ...(spec.aliases ?? []).filter((alias) => alias.length > 1)]

/** `"ralph"."max-iterations"`: a place in a settings file, from the path to it. */
export const placeOf = (path: ReadonlyArray<PropertyKey>) => path.map((key) => `"${String(key)}"`).join(".")

const show = (value: unknown) => JSON.stringify(value) ?? String(value)

/** However the value fails `schema`, the one message that says what the option takes. */
const saying = <A, I>(schema: Schema.Schema<A, I>, says: (actual: unknown) => string): Schema.Schema<A, I> =>
  schema.annotations({ message: (issue) => ({ message: says(issue.actual), override: true }) })

const Text = Schema.String.pipe(Schema.filter((text) => text.trim() !== ""))

/**
 * A value of the settings file for `spec`, into its value as the parser gives it: a switch takes
 * true or false; a repeatable option a string or a list of them, none empty; any other a string or
 * a finite number. A path is the repository's (`rooted`).
 */
const valueSchema = (spec: OptionSpec, rooted: (path: string) => string): Schema.Schema.AnyNoContext => {
  if (spec.kind === "switch") return saying(Schema.Boolean, (actual) => `must be true or false, got ${show(actual)}`)
  const inPlace = (text: string) => (spec.pseudo === "path" ? rooted(text) : text)
  if (spec.repeatable === true) {
    return saying(
      Schema.transform(Schema.Union(Text, Schema.NonEmptyArray(Text)), Schema.mutable(Schema.Array(Schema.String)), {
        strict: false,
        decode: (given) => (typeof given === "string" ? [given] : given).map(inPlace),
        encode: (list) => list
      }),
      (actual) => `must be a list of strings (not empty), e.g. [${spec.example ?? "\"...\""}], got ${show(actual)}`
    )
  }
  const text = Schema.transform(Schema.Union(Schema.String, Schema.Finite), Schema.String, {
    strict: true,
    decode: (given) => inPlace(String(given)),
    encode: (text) => text
  })
  const says = (actual: unknown) => `must be a string or a number, e.g. ${spec.example ?? spec.default ?? "\"...\""}, got ${show(actual)}`
  return spec.default === undefined
    ? saying(Schema.transform(text, Schema.OptionFromSelf(Schema.String), { strict: true, decode: Option.some, encode: Option.getOrElse(() => "") }), says)
    : saying(text, says)
}

/** An action asks for something to be done at once: the command line's, never a setting. */
const actionSchema = (spec: OptionSpec) => saying(Schema.Never, () => `is an action, not a setting; give --${spec.name} on the command line`)

export interface SectionOptions {
  /** Another tool's file: keys that are not options, and actions, are its own and are left alone. */
  readonly lenient: boolean
  /** A path the file gives, as spool reads it: from the repository root. */
  readonly rooted: (path: string) => string
}

/**
 * The Schema of a settings section for the options of `specs`: each key an option's long name (or
 * long alias), each value of its option's kind, each option named once. It decodes to the fields
 * of the option table, each value as the parser gives it.
 */
export const sectionSchema = <T extends Record<string, OptionSpec>>(
  specs: T,
  options: SectionOptions
): Schema.Schema<SettingsOf<T>, Readonly<Record<string, unknown>>> => {
  const settable = Object.entries(specs).filter(([, spec]) => !(options.lenient && spec.action === true))
  const oneKeyEach = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
    Schema.filter((section) => {
      for (const [, spec] of settable) {
        const [first, second] = Object.keys(section).filter((key) => settingKeys(spec).includes(key))
        if (second !== undefined) return `"${first}" and "${second}" are the same option; keep one`
      }
      return true
    })
  )
  const byKey = Schema.Struct(Object.fromEntries(settable.flatMap(([, spec]) => {
    const value = spec.action === true ? actionSchema(spec) : valueSchema(spec, options.rooted)
    return settingKeys(spec).map((key) => [key, Schema.optionalWith(value, { exact: true })] as const)
  }))).annotations({ parseOptions: { onExcessProperty: options.lenient ? "ignore" : "error", errors: "all" } })
  const byField = Schema.transform(Schema.compose(oneKeyEach, byKey, { strict: false }), Schema.Record({ key: Schema.String, value: Schema.Unknown }), {
    strict: false,
    decode: (given: Record<string, unknown>) =>
      Object.fromEntries(settable.flatMap(([field, spec]) => {
        const key = settingKeys(spec).find((key) => Object.hasOwn(given, key))
        return key === undefined ? [] : [[field, given[key]]]
      })),
    encode: (fields: Record<string, unknown>) =>
      Object.fromEntries(settable.flatMap(([field, spec]) => (Object.hasOwn(fields, field) ? [[spec.name, fields[field]]] : [])))
  })
  // Built from the table as it runs: what it decodes to is what `SettingsOf` says of the table.
  return byField as unknown as Schema.Schema<SettingsOf<T>, Readonly<Record<string, unknown>>>
}

/** Where a section is and how it is read: `file`, the path to the section in it (`["ralph"]`). */
export interface SectionPlace extends SectionOptions {
  readonly file: string
  readonly at: ReadonlyArray<string>
  /** Keys that stood elsewhere in the file, by their path below `at` (`"sandbox"`'s own, in its object). */
  readonly paths?: Readonly<Record<string, ReadonlyArray<string>>>
}

/** One line for a mistake of the section, the place named from the decode's path. */
const describe = (issue: ParseResult.ArrayFormatterIssue, specs: Record<string, OptionSpec>, where: Pick<SectionPlace, "at" | "paths">) => {
  const [key, ...below] = issue.path
  // The section as a whole: one option named twice, its message naming both keys.
  if (key === undefined) return issue.message
  const place = placeOf([...where.at, ...(where.paths?.[String(key)] ?? [key]), ...below])
  if (issue._tag !== "Unexpected") return `${place} ${issue.message}`
  const names = Object.values(specs).filter((spec) => spec.action !== true).map((spec) => spec.name)
  const suggestion = closest(String(key).replace(/^-+/, ""), names)
  return `unknown key ${place}; ${suggestion === null ? "the keys are the long options of spool ralph without the leading --" : `did you mean "${suggestion}"?`}`
}

/**
 * A settings section decoded with the Schema of `specs`; else the first mistake in the file's order
 * of its keys, as one line that names the file and the key.
 */
export const decodeSection = <T extends Record<string, OptionSpec>>(
  specs: T,
  section: Readonly<Record<string, unknown>>,
  place: SectionPlace
): Either.Either<SettingsOf<T>, UsageError> =>
  Either.mapLeft(Schema.decodeUnknownEither(sectionSchema(specs, place))(section), (error) => {
    const keys = Object.keys(section)
    const rank = (issue: ParseResult.ArrayFormatterIssue) => (issue.path.length === 0 ? -1 : keys.indexOf(String(issue.path[0])))
    const [first] = ParseResult.ArrayFormatter.formatErrorSync(error).sort((a, b) => rank(a) - rank(b))
    return new UsageError({ message: `${place.file}: ${first === undefined ? "cannot be read" : describe(first, specs, place)}` })
  })
