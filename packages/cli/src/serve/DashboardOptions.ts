import { Effect, Option } from "effect"
import { isIP } from "node:net"
import { example } from "../OptionSpec.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "../ralph/Options.js"
import { SettingsOrigin } from "../ralph/Settings.js"
import { UsageError } from "../UsageError.js"

const usage = (message: string) => new UsageError({ message })

/** How the dashboard is to be served, from `--serve` and its options. */
export interface DashboardPlan {
  /** Nothing else runs: it serves until stopped. */
  readonly alone: boolean
  /** The address to listen on, as `listen` takes it (no brackets). */
  readonly host: string
  /** 0: a free one. */
  readonly port: number
  readonly token: string | null
  /** Only this machine can reach it. */
  readonly loopback: boolean
}

/** `127.0.0.1` and the rest of 127/8, `::1`, `localhost`. */
export const isLoopback = (host: string) => {
  const bare = host.toLowerCase()
  if (bare === "localhost" || bare === "::1" || bare === "0:0:0:0:0:0:0:1") return true
  return isIP(bare) === 4 && bare.startsWith("127.")
}

const portOf = (text: string) => {
  const trimmed = text.trim()
  return /^\d{1,5}$/.test(trimmed) && Number(trimmed) <= 65535
    ? Effect.succeed(Number(trimmed))
    : Effect.fail(usage(`--port must be a whole number from 0 to 65535 (0: a free one), got '${text}'; e.g. ${example(specs.port)}`))
}

/**
 * The dashboard the command line asks for, checked: null without `--serve` (or with an action, the
 * flag `action` names, when the settings file gave `serve`). Its options without `--serve`, `--serve` beside an action,
 * a bad port, and an address beyond this machine without a token are usage errors, before
 * anything runs.
 */
export const dashboardPlan = (args: RalphArgs, sweep: boolean, action: string | null) =>
  Effect.gen(function*() {
    const given = [
      Option.isSome(args.port) ? "--port" : null,
      Option.isSome(args.serveHost) ? "--serve-host" : null,
      Option.isSome(args.serveToken) ? "--serve-token" : null
    ].filter((flag) => flag !== null)
    if (!args.serve) {
      if (given.length === 0) return null
      return yield* usage(`${given[0]} goes with --serve: spool ralph --serve ${given[0]} ...`)
    }
    if (action !== null) {
      // The settings file's `serve` is for runs: an action answers without it.
      if ((yield* SettingsOrigin).fromFile.includes(specs.serve.name)) return null
      return yield* usage(`--serve serves the dashboard alone or beside a loop or sweep, not with ${action}; give them one at a time`)
    }
    const port = Option.isSome(args.port) ? yield* portOf(args.port.value) : 0
    const host = Option.getOrElse(Option.map(args.serveHost, (h) => h.trim().replace(/^\[(.*)\]$/, "$1")), () => "127.0.0.1")
    if (host === "") return yield* usage(`--serve-host needs an address, e.g. ${example(specs.serveHost)}`)
    const token = Option.getOrNull(args.serveToken)
    if (token !== null && !/^\S+$/.test(token)) {
      return yield* usage("--serve-token must be one word: no spaces, not empty (it is sent as ?token= or Authorization: Bearer)")
    }
    const loopback = isLoopback(host)
    if (!loopback && token === null) {
      return yield* usage(`--serve-host ${host} opens the dashboard beyond this machine: give --serve-token too, which every request must then carry`)
    }
    return {
      alone: Option.isNone(args.change) && !sweep,
      host,
      port,
      token,
      loopback
    } satisfies DashboardPlan
  })
