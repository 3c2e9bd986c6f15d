import { Runs, Sweeps } from "@spool/app"
import type { Change } from "@spool/core"
import { Effect, Option } from "effect"
import { type Beside, withDashboard } from "../serve/ServeMode.js"
import { UsageError } from "../UsageError.js"
import { wholeNumber } from "./GuardOptions.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "./Options.js"
import { loopRequest, sweepTarget } from "./Requests.js"

/** The command line asks for a sweep: every ready change, a module's, several changes, or a merge. */
export const isSweep = (args: RalphArgs) => args.continueReady || args.continueModule || args.changes.length > 1 || args.merge

/**
 * Runs the loop on `change`, on its own: how it ended is the result. Once its request is checked,
 * it runs `beside` what the command line asks for (the dashboard of `--serve`).
 */
export const runChange = (args: RalphArgs, change: Change, beside: Beside = withDashboard(null)) =>
  Effect.gen(function*() {
    const request = { ...yield* loopRequest(args), change: change.id }
    return yield* (yield* Runs).run(request, (run) => beside(run))
  })

/**
 * `spool ralph --continue-ready` (or `--continue-module`, several `--change`, `--merge`): runs the
 * ready changes as one sweep, which prints its summary however it ends; once its request is
 * checked, `beside` what the command line asks for (the dashboard of `--serve`).
 */
export const sweep = (args: RalphArgs, beside: Beside = withDashboard(null)) =>
  Effect.gen(function*() {
    const modes = [args.status, args.list, Option.isSome(args.addContext), args.clearContext, args.remove].filter(Boolean)
    if (modes.length > 0) {
      return yield* new UsageError({
        message: "a sweep (--continue-ready, --continue-module, several --change, --merge) runs loops; give --status, --list, --add-context, --clear-context and --remove without it"
      })
    }
    const selection = yield* sweepTarget(args)
    const maxParallel = yield* wholeNumber(specs.maxParallel, args.maxParallel, 1)
    const request = { ...yield* loopRequest(args), selection, maxParallel, merge: args.merge }
    return yield* (yield* Sweeps).run(request, (swept) => beside(swept))
  })
