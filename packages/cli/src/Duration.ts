import { Effect } from "effect"
import { usageError } from "./UsageError.js"

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * `30s`, `5m`, `1h30m`, `250ms`, `2d` -> milliseconds; `0` only where `allowZero` (it turns something
 * off). `option` is the long name of the option the text is the value of.
 */
export const parseDuration = (option: string, text: string, options: { readonly allowZero?: boolean } = {}) => {
  const trimmed = text.trim()
  if (options.allowZero === true && /^0+$/.test(trimmed)) return Effect.succeed(0)
  const parts = [...trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)]
  const total = parts.reduce((ms, [, n, unit]) => ms + Number(n) * UNITS[unit!]!, 0)
  return trimmed !== "" && parts.map((p) => p[0]).join("") === trimmed && total > 0 && Number.isSafeInteger(total)
    ? Effect.succeed(total)
    : Effect.fail(
      usageError(`--${option} must be a duration like 30s, 5m, 1h30m or 2d${options.allowZero === true ? " (or 0)" : ""}, got '${text}'`, option)
    )
}
