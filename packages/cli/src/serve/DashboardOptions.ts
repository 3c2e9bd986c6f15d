import { Effect, Option } from "effect"
import { isIP } from "node:net"
import { example } from "../OptionSpec.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "../ralph/Options.js"
import { SettingsOrigin } from "../ralph/Settings.js"
import { usageError } from "../UsageError.js"

const usage = usageError

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
    : Effect.fail(usage(`--port must be a whole number from 0 to 65535 (0: a free one), got '${text}'; e.g. ${example(specs.port)}`, specs.port.name))
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
      Option.isSome(args.port) ? specs.port : null,
      Option.isSome(args.serveHost) ? specs.serveHost : null,
      Option.isSome(args.serveToken) ? specs.serveToken : null
    ].filter((spec) => spec !== null)
    if (!args.serve) {
      if (given[0] === undefined) return null
      return yield* usage(`--${given[0].name} goes with --serve: spool ralph --serve --${given[0].name} ...`, given[0].name)
    }
    if (action !== null) {
      // The settings file's `serve` is for runs: an action answers without it.
      if ((yield* SettingsOrigin).fromFile.includes(specs.serve.name)) return null
      return yield* usage(`--serve serves the dashboard alone or beside a loop or sweep, not with ${action}; give them one at a time`, specs.serve.name)
    }
    const port = Option.isSome(args.port) ? yield* portOf(args.port.value) : 0
    const host = Option.getOrElse(Option.map(args.serveHost, (h) => h.trim().replace(/^\[(.*)\]$/, "$1")), () => "127.0.0.1")
    if (host === "") return yield* usage(`--serve-host needs an address, e.g. ${example(specs.serveHost)}`, specs.serveHost.name)
    const token = Option.getOrNull(args.serveToken)
    if (token !== null && !/^\S+$/.test(token)) {
      return yield* usage("--serve-token must be one word: no spaces, not empty (it is sent as ?token= or Authorization: Bearer)", specs.serveToken.name)
    }
    const loopback = isLoopback(host)
    if (!loopback && token === null) {
      return yield* usage(
        `--serve-host ${host} opens the dashboard beyond this machine: give --serve-token too, which every request must then carry`,
        specs.serveHost.name
      )
    }
    return {
      alone: Option.isNone(args.change) && !sweep,
      host,
      port,
      token,
      loopback
    } satisfies DashboardPlan
  })
