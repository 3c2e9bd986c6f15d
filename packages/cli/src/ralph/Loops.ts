import { Runs, Sweeps } from "@spool/app"
import type { Change } from "@spool/core"
import { Effect } from "effect"
import { type Beside, withDashboard } from "../serve/ServeMode.js"
import { wholeNumber } from "./GuardOptions.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "./Options.js"
import { loopRequest, sweepTarget } from "./Requests.js"

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
    const selection = yield* sweepTarget(args)
    const maxParallel = yield* wholeNumber(specs.maxParallel, args.maxParallel, 1)
    const request = { ...yield* loopRequest(args), selection, maxParallel, merge: args.merge, approve: args.merge && args.approve }
    return yield* (yield* Sweeps).run(request, (swept) => beside(swept))
  })
