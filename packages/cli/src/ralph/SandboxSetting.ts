import { Either } from "effect"
import { UsageError } from "../UsageError.js"
import { ralphOptionSpecs as specs } from "./Options.js"
import { placeOf } from "./SettingsSchema.js"

/** The options `"sandbox": {...}` may hold: the sandbox's own additions. */
const INSIDE = [specs.allowHost.name, specs.denyRead.name, specs.passEnv.name] as const

/** A section with `"sandbox": {...}` read as `"sandbox": true` and its keys beside it, and where each of those came from. */
export interface Expanded {
  readonly section: Record<string, unknown>
  /** The path in the section of each key that moved, below `at`: `["sandbox", "allow-host"]`. */
  readonly paths: Readonly<Record<string, ReadonlyArray<string>>>
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * `"sandbox": {"allow-host": [...], "deny-read": [...], "pass-env": [...]}` is `"sandbox": true` with
 * those options, each in its place in the file's order; any other key inside it, or one given there
 * and beside it too, is a mistake named by its path.
 */
export const expandSandbox = (section: Readonly<Record<string, unknown>>, file: string, at: ReadonlyArray<string>): Either.Either<Expanded, UsageError> => {
  const inner = section[specs.sandbox.name]
  if (!isObject(inner)) return Either.right({ section: { ...section }, paths: {} })
  const mistake = (message: string) => Either.left(new UsageError({ message: `${file}: ${message}` }))
  for (const key of Object.keys(inner)) {
    const where = placeOf([...at, specs.sandbox.name, key])
    if (!(INSIDE as ReadonlyArray<string>).includes(key)) return mistake(`unknown key ${where}; the keys there are ${INSIDE.join(", ")}`)
    if (Object.hasOwn(section, key)) return mistake(`${where} and ${placeOf([...at, key])} are the same option; keep one`)
  }
  const expanded: Record<string, unknown> = {}
  const paths: Record<string, ReadonlyArray<string>> = {}
  for (const [key, value] of Object.entries(section)) {
    if (key !== specs.sandbox.name) {
      expanded[key] = value
      continue
    }
    expanded[key] = true
    for (const [innerKey, innerValue] of Object.entries(inner)) {
      expanded[innerKey] = innerValue
      paths[innerKey] = [key, innerKey]
    }
  }
  return Either.right({ section: expanded, paths })
}
