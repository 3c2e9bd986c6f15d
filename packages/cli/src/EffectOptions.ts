import { Options } from "@effect/cli"
import type { Option } from "effect"
import type { OptionSpec } from "./OptionSpec.js"

/** An option's value as the parser gives it: a switch's boolean, a repeatable option's list, a value (an Option without a default). */
export type ValueOf<S> = S extends { readonly kind: "switch" } ? boolean
  : S extends { readonly repeatable: true } ? Array<string>
  : S extends { readonly default: string } ? string
  : Option.Option<string>

export type OptionsOf<T extends Record<string, OptionSpec>> = { readonly [K in keyof T]: Options.Options<ValueOf<T[K]>> }

const toOptions = (spec: OptionSpec): Options.Options<unknown> => {
  if (spec.kind === "switch") {
    return Options.boolean(spec.name, { aliases: spec.aliases ?? [] }).pipe(Options.withDescription(spec.description))
  }
  const text = (spec.aliases ?? []).reduce(
    (option, alias) => Options.withAlias(option, alias),
    Options.text(spec.name).pipe(Options.withPseudoName(spec.pseudo), Options.withDescription(spec.description))
  )
  if (spec.repeatable === true) return Options.repeated(text)
  return spec.default === undefined ? Options.optional(text) : Options.withDefault(text, spec.default)
}

/** The @effect/cli options of a table of option definitions. */
export const effectOptions = <T extends Record<string, OptionSpec>>(specs: T): OptionsOf<T> =>
  Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, toOptions(spec)])) as OptionsOf<T>
