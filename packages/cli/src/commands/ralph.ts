import { Command } from "@effect/cli"
import { Application, Approvals, leasedChanges, Lists, onRemote, removeWorktree } from "@spool/app"
import { Invocation } from "@spool/app/host"
import { ContextStore, Workspace } from "@spool/core"
import { Clock, Effect, Layer, Option } from "effect"
import { Outcome } from "../ExitCode.js"
import { listText } from "../ralph/ListText.js"
import { intentOf } from "../ralph/Intent.js"
import { runChange, sweep } from "../ralph/Loops.js"
import { type RalphArgs, ralphOptions } from "../ralph/Options.js"
import { layoutOf, statusTarget, targetChange } from "../ralph/Targeting.js"
import { type Location, locate } from "../ralph/WorktreeLocation.js"
import { serveAlone, withDashboard } from "../serve/ServeMode.js"
import { showStatus } from "../Status.js"
import { reports, TerminalReporter } from "../TerminalReporter.js"

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

/** One of `spool ralph`'s actions (status, list, add or clear context, remove), the dashboard alone, a loop, or a sweep. */
const ralphIn = (input: RalphArgs, location: Location) =>
  Effect.gen(function*() {
    const args = inWorktree(input, location)
    const intent = yield* intentOf(args, input.worktree)
    switch (intent._tag) {
      case "Serve":
        return yield* serveAlone(intent.dashboard)
      case "Sweep": {
        const report = yield* sweep(args, withDashboard(intent.dashboard))
        return Outcome.SweepEnded({ ending: report.ending })
      }
      case "List": {
        const terminal = yield* TerminalReporter
        const changes = yield* (yield* Lists).list({ remote: intent.remote })
        const { tree } = yield* Workspace
        yield* terminal.print(intent.json ? JSON.stringify(changes, null, 2) : listText(changes, terminal.stdoutPalette, tree.changesDir))
        return yield* done()
      }
      case "Status": {
        const terminal = yield* TerminalReporter
        const target = yield* statusTarget(args)
        const out = { print: terminal.print, palette: terminal.stdoutPalette }
        const { remote } = intent
        // With --remote, a loop runs while its lease there is held; here, while a live process holds its lock.
        yield* remote === null
          ? showStatus(target, intent.json, out)
          : onRemote(remote, (leases) =>
            showStatus(target, intent.json, { ...out, live: Effect.map(Clock.currentTimeMillis, (now) => leasedChanges(leases, now)) }))
        return yield* done()
      }
      case "AddContext": {
        const change = yield* targetChange(args)
        yield* (yield* ContextStore).append(change.id, intent.text)
        return yield* done(`added context for ${change.id}; the loop uses it from its next iteration`)
      }
      case "Remove":
        return yield* done(yield* removeWorktree(yield* targetChange(args)))
      case "ClearContext": {
        const change = yield* targetChange(args)
        yield* (yield* ContextStore).clear(change.id)
        return yield* done(`cleared context for ${change.id}`)
      }
      case "Decide": {
        const { change, decision, why, remote } = intent
        return yield* done(yield* (yield* Approvals).decide({ change, decision, why, remote }))
      }
      case "Loop": {
        const result = yield* runChange(args, yield* targetChange(args), withDashboard(intent.dashboard))
        return Outcome.LoopEnded({ status: result.status })
      }
    }
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
