import { makeRedactor } from "@spool/core"
import { Effect } from "effect"
import { Invocation } from "@spool/app/host"
import { TerminalReporter } from "../TerminalReporter.js"
import type { DashboardPlan } from "./DashboardOptions.js"
import { serveDashboard } from "./DashboardServer.js"

/** Serves the dashboard for the scope and says where, never with the token. */
const start = (plan: DashboardPlan) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const { url } = yield* serveDashboard(plan, makeRedactor(invocation.env))
    const terminal = yield* TerminalReporter
    yield* terminal.print(`dashboard: ${url}${plan.token === null ? "" : " (add ?token=<your --serve-token>)"}`)
  })

/** `effect` (a loop, a sweep) with the dashboard served beside it for as long as it runs; as it is without one. */
export const withDashboard = (plan: DashboardPlan | null) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  plan === null ? effect : Effect.scoped(Effect.zipRight(start(plan), effect))

/** What a run is wrapped in once its options are checked: the dashboard beside it, or nothing. */
export type Beside = ReturnType<typeof withDashboard>

/** `spool ralph --serve` alone: serves until stopped (Ctrl-C, SIGTERM: exit 130, 143, as any stop), as loops start and end. */
export const serveAlone = (plan: DashboardPlan) => Effect.scoped(Effect.zipRight(start(plan), Effect.never))
