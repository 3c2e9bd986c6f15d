import { Effect } from "effect"
import { UsageError } from "./UsageError.js"

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** `30s`, `5m`, `1h30m`, `250ms` -> milliseconds. */
export const parseDuration = (flag: string, text: string) => {
  const trimmed = text.trim()
  const parts = [...trimmed.matchAll(/(\d+)(ms|s|m|h)/g)]
  const total = parts.reduce((ms, [, n, unit]) => ms + Number(n) * UNITS[unit!]!, 0)
  return trimmed !== "" && parts.map((p) => p[0]).join("") === trimmed && total > 0
    ? Effect.succeed(total)
    : Effect.fail(new UsageError({ message: `${flag} must be a duration like 30s, 5m or 1h30m, got '${text}'` }))
}
