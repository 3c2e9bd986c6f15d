import { Invocation } from "@spool/app/host"
import type { SandboxSettings } from "@spool/core"
import { Effect } from "effect"
import { isAbsolute, normalize, resolve } from "node:path"
import { example } from "../OptionSpec.js"
import { usageError } from "../UsageError.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "./Options.js"

/** A host name or address (`*.` allowed before a name), with a port if given. */
const HOST = /^(?:\*\.)?(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::\d{1,5})?$/
/** A variable's name, or a prefix of names ending in `*`. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*\*?$/

/**
 * The sandbox's settings from the command line, or null without `--sandbox`; a host, path or name
 * that cannot be one, or one given without `--sandbox`, is a usage error before anything runs.
 */
export const sandboxSettings = (args: RalphArgs) =>
  Effect.gen(function*() {
    const extras = [
      [specs.allowHost, args.allowHost],
      [specs.denyRead, args.denyRead],
      [specs.passEnv, args.passEnv]
    ] as const
    if (!args.sandbox) {
      const given = extras.find(([, values]) => values.length > 0)
      if (given !== undefined) {
        return yield* usageError(`--${given[0].name} goes with --sandbox: spool ralph --sandbox ${example(given[0])} ...`, given[0].name)
      }
      return null
    }
    for (const host of args.allowHost) {
      const port = /:(\d+)$/.exec(host.trim())?.[1]
      if (!HOST.test(host.trim()) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
        return yield* usageError(
          `--allow-host takes a host name or address, with a port if you like (registry.npmjs.org, 127.0.0.1:8080), got '${host}'`,
          specs.allowHost.name
        )
      }
    }
    for (const name of args.passEnv) {
      if (!NAME.test(name.trim())) {
        return yield* usageError(`--pass-env takes a variable's name (NPM_TOKEN) or a prefix of names (NPM_*), got '${name}'`, specs.passEnv.name)
      }
    }
    const { cwd, env } = yield* Invocation
    const home = env.HOME ?? "/"
    const absolute = (path: string) => {
      const expanded = path === "~" ? home : path.startsWith("~/") ? `${home}/${path.slice(2)}` : path
      return normalize(isAbsolute(expanded) ? expanded : resolve(cwd, expanded))
    }
    return {
      allowHosts: args.allowHost.map((host) => host.trim().toLowerCase()),
      denyRead: args.denyRead.map((path) => absolute(path.trim())),
      passEnv: args.passEnv.map((name) => name.trim())
    } satisfies SandboxSettings
  })
