import { Command } from "@effect/cli"
import { Application, leasedChanges, Lists, onRemote, removeWorktree } from "@spool/app"
import { Invocation } from "@spool/app/host"
import { ContextStore, Workspace } from "@spool/core"
import { Clock, Effect, Layer, Option } from "effect"
import { Outcome } from "../ExitCode.js"
import { listText } from "../ralph/ListText.js"
import { isSweep, runChange, sweep } from "../ralph/Loops.js"
import { type RalphArgs, ralphOptions, ralphOptionSpecs } from "../ralph/Options.js"
import { SettingsOrigin } from "../ralph/Settings.js"
import { layoutOf, statusTarget, targetChange } from "../ralph/Targeting.js"
import { type Location, locate } from "../ralph/WorktreeLocation.js"
import { dashboardPlan, serveAlone, withDashboard } from "../serve/ServeMode.js"
import { showStatus } from "../Status.js"
import { reports, TerminalReporter } from "../TerminalReporter.js"
import { UsageError } from "../UsageError.js"

const usage = (message: string) => new UsageError({ message })

/** Inside a change's worktree, spool works on that change, and a loop runs in that worktree. */
const inWorktree = (args: RalphArgs, location: Location): RalphArgs =>
  location.worktreeChange === null ? args : {
    ...args,
    change: Option.orElse(args.change, () => Option.some(location.worktreeChange!)),
    worktree: true
  }

const done = (answer?: string) =>
  answer === undefined
    ? Effect.succeed(Outcome.Done())
    : Effect.as(Effect.flatMap(TerminalReporter, (terminal) => terminal.print(answer)), Outcome.Done())

/** One of `spool ralph`'s modes (status, add or clear context, remove) or the loop itself. */
const ralphIn = (input: RalphArgs, location: Location) =>
  Effect.gen(function*() {
    const args = inWorktree(input, location)
    // As --remove goes with --worktree (below); the settings file's lease-ttl is for its runs with --remote.
    if ((yield* SettingsOrigin).fromCommandLine.includes(ralphOptionSpecs.leaseTtl.name) && Option.isNone(args.remote)) {
      return yield* usage("--lease-ttl goes with --remote: spool ralph --change <id> --remote origin --lease-ttl 30m")
    }
    const dashboard = yield* dashboardPlan(args, isSweep(args))
    if (dashboard?.alone === true) return yield* serveAlone(dashboard)
    if (isSweep(args)) {
      const report = yield* sweep(args, withDashboard(dashboard))
      return Outcome.SweepEnded({ ending: report.ending })
    }
    const modes = [args.status, args.list, Option.isSome(args.addContext), args.clearContext, args.remove].filter(Boolean).length
    if (modes > 1) return yield* usage("use only one of --status, --list, --add-context, --clear-context and --remove at a time")
    if (args.remove && !input.worktree) {
      return yield* usage("--remove goes with --worktree: spool ralph --change <id> --worktree --remove")
    }
    if (Option.isSome(args.addContext) && args.addContext.value.trim() === "") {
      return yield* usage("--add-context needs some text, e.g. --add-context \"use the v2 API\"")
    }
    if (args.json && !args.status && !args.list) return yield* usage("--json goes with --status or --list: spool ralph --list --json")
    const remote = Option.getOrNull(args.remote)

    if (args.list) {
      const terminal = yield* TerminalReporter
      const changes = yield* (yield* Lists).list({ remote })
      const { tree } = yield* Workspace
      yield* terminal.print(args.json ? JSON.stringify(changes, null, 2) : listText(changes, terminal.stdoutPalette, tree.changesDir))
      return yield* done()
    }
    if (args.status) {
      const terminal = yield* TerminalReporter
      const target = yield* statusTarget(args)
      const out = { print: terminal.print, palette: terminal.stdoutPalette }
      // With --remote, a loop runs while its lease there is held; here, while a live process holds its lock.
      yield* remote === null
        ? showStatus(target, args.json, out)
        : onRemote(remote, (leases) =>
          showStatus(target, args.json, { ...out, live: Effect.map(Clock.currentTimeMillis, (now) => leasedChanges(leases, now)) }))
      return yield* done()
    }
    const change = yield* targetChange(args)
    const contexts = yield* ContextStore
    if (Option.isSome(args.addContext)) {
      yield* contexts.append(change.id, args.addContext.value)
      return yield* done(`added context for ${change.id}; the loop uses it from its next iteration`)
    }
    if (args.remove) return yield* done(yield* removeWorktree(change))
    if (args.clearContext) {
      yield* contexts.clear(change.id)
      return yield* done(`cleared context for ${change.id}`)
    }
    const result = yield* runChange(args, change, withDashboard(dashboard))
    return Outcome.LoopEnded({ status: result.status })
  })

/** `spool ralph` (or `loop`) with its parsed options, in the repository the invocation is in. */
export const handler = (input: RalphArgs) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const location = locate(invocation.cwd)
    const layout = yield* layoutOf(input)
    return yield* ralphIn(input, location).pipe(
      Effect.provide(Application.layer({ cwd: location.workspaceCwd, layout }).pipe(Layer.provideMerge(reports)))
    )
  })

const make = <Name extends string>(name: Name, description: string) =>
  Command.make(name, ralphOptions).pipe(Command.withDescription(description))

/** `ralph` and `loop` are one command under two names: same options, same handler. */
export const ralph = make("ralph", "Run an agent in a loop on a change until it prints the completion promise")
export const loop = make("loop", "The same as spool ralph")
