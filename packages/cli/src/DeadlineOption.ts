import { Effect } from "effect"
import { parseDuration } from "./Duration.js"
import { usageError } from "./UsageError.js"

const fail = (text: string, why: string) =>
  usageError(`--deadline ${why}, got '${text}': give a duration from now (5h30m) or a time (18:00, 2026-11-28T06:00Z)`, "deadline")

/**
 * `--deadline`: a duration from `now` (`5h30m`), a time of day (`18:00`, `18:00:30`: the next one,
 * in local time) or a date and time (`2026-11-28T06:00Z`, with a zone or in local time), as epoch ms.
 */
export const parseDeadline = (text: string, now: number) =>
  Effect.gen(function*() {
    const trimmed = text.trim()
    if (/^\d+(?:ms|s|m|h|d)/.test(trimmed)) return now + (yield* parseDuration("deadline", trimmed))
    const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(trimmed)
    if (clock !== null) {
      const [hours, minutes, seconds] = [Number(clock[1]), Number(clock[2]), Number(clock[3] ?? 0)]
      if (hours > 23 || minutes > 59 || seconds > 59) return yield* fail(text, "must be a valid time of day")
      const at = new Date(now)
      at.setHours(hours, minutes, seconds, 0)
      return at.getTime() > now ? at.getTime() : at.getTime() + 86_400_000
    }
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(trimmed)) {
      const at = Date.parse(trimmed)
      if (Number.isNaN(at)) return yield* fail(text, "must be a valid date and time")
      if (at <= now) return yield* fail(text, `is already past (it is now ${new Date(now).toISOString()})`)
      return at
    }
    return yield* fail(text, "must be a duration or a time")
  })
