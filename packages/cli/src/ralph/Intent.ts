import { Data, Effect, Option } from "effect"
import { type DashboardPlan, dashboardPlan } from "../serve/DashboardOptions.js"
import { usageError } from "../UsageError.js"
import type { RalphArgs } from "./Options.js"
import { SettingsOrigin } from "./Settings.js"
import { ralphOptionSpecs as specs } from "./Options.js"

const usage = usageError

/** What a `spool ralph` command line asks for: one action, the dashboard alone, a loop, or a sweep. */
export type Intent = Data.TaggedEnum<{
  /** `--status`: a change's loop, or every change with loop state; on a remote when given. */
  Status: { readonly json: boolean; readonly remote: string | null }
  /** `--list`: every change and its state; on a remote when given. */
  List: { readonly json: boolean; readonly remote: string | null }
  /** `--add-context <text>` for the change's loop. */
  AddContext: { readonly text: string }
  /** `--clear-context`. */
  ClearContext: {}
  /** `--approve <change>` (approved) or `--reject <change> "<why>"` (rejected): a person's word on a merge. */
  Decide: { readonly change: string; readonly decision: "approved" | "rejected"; readonly why: string | null; readonly remote: string | null }
  /** `--worktree --remove`: the change's worktree goes. */
  Remove: {}
  /** `--serve` alone: the dashboard until stopped. */
  Serve: { readonly dashboard: DashboardPlan }
  /** Several changes (`--continue-ready`, `--continue-module`, several `--change`, `--merge`). */
  Sweep: { readonly dashboard: DashboardPlan | null }
  /** One loop on one change. */
  Loop: { readonly dashboard: DashboardPlan | null }
}>
export const Intent = Data.taggedEnum<Intent>()

/** The actions, each answered at once instead of a loop: at most one is given. */
const actions = [
  { flag: "--status", given: (args: RalphArgs) => args.status },
  { flag: "--list", given: (args: RalphArgs) => args.list },
  { flag: "--add-context", given: (args: RalphArgs) => Option.isSome(args.addContext) },
  { flag: "--clear-context", given: (args: RalphArgs) => args.clearContext },
  { flag: "--remove", given: (args: RalphArgs) => args.remove },
  { flag: "--reject", given: (args: RalphArgs) => args.reject }
] as const

/**
 * `--approve <change>` or `--reject <change> "<why>"`: the change is `--change`'s, else the first
 * word after the options; a rejection's why is the words after it.
 */
const decisionOf = (args: RalphArgs, decision: "approved" | "rejected") =>
  Effect.gen(function*() {
    const flag = decision === "approved" ? "approve" : "reject"
    const words = args.prompt.map((word) => word.trim()).filter((word) => word !== "")
    const change = Option.getOrNull(args.change) ?? words[0] ?? null
    const rest = Option.isSome(args.change) ? words : words.slice(1)
    const shape = decision === "approved" ? "spool ralph --approve <change>" : "spool ralph --reject <change> \"<why>\""
    if (change === null) return yield* usage(`--${flag} needs the change awaiting approval: ${shape} (spool ralph --list shows them)`, flag)
    if (decision === "approved" && rest.length > 0) return yield* usage(`--approve takes one change and nothing else: ${shape}`, flag)
    if (decision === "rejected" && rest.length === 0) return yield* usage(`--reject needs the reason, for the next run's prompt: ${shape}`, flag)
    return Intent.Decide({ change, decision, why: decision === "rejected" ? rest.join(" ") : null, remote: Option.getOrNull(args.remote) })
  })

/** The command line asks for a sweep: every ready change, a module's, several changes, or a merge. */
export const isSweep = (args: RalphArgs) => args.continueReady || args.continueModule || args.changes.length > 1 || args.merge

/**
 * What the command line asks for, checked as a whole: one action at a time, never beside a sweep or
 * the dashboard, each with what it goes with. `worktreeGiven`: `--worktree` was on the command line
 * (inside a change's worktree, spool adds it itself).
 */
export const intentOf = (args: RalphArgs, worktreeGiven: boolean) =>
  Effect.gen(function*() {
    // As --remove goes with --worktree (below); the settings file's lease-ttl is for its runs with --remote.
    if ((yield* SettingsOrigin).fromCommandLine.includes(specs.leaseTtl.name) && Option.isNone(args.remote)) {
      return yield* usage("--lease-ttl goes with --remote: spool ralph --change <id> --remote origin --lease-ttl 30m")
    }
    const sweep = isSweep(args)
    // The settings file's approve is for --merge sweeps; on the command line without one, a person approves a change.
    const approveGiven = (yield* SettingsOrigin).fromCommandLine.includes(specs.approve.name)
    const given = [...actions.filter((action) => action.given(args)).map((action) => action.flag), ...(approveGiven && !sweep ? ["--approve"] : [])]
    const dashboard = yield* dashboardPlan(args, sweep, given[0] ?? null)
    if (dashboard?.alone === true) return Intent.Serve({ dashboard })
    if (sweep) {
      if (given.length > 0) {
        return yield* usage(
          "a sweep (--continue-ready, --continue-module, several --change, --merge) runs loops; give --status, --list, --add-context, --clear-context, --remove and --reject without it",
          (args.continueReady ? specs.continueReady : args.continueModule ? specs.continueModule : args.merge ? specs.merge : specs.changes).name
        )
      }
      if (approveGiven && !args.merge) {
        return yield* usage("--approve goes with --merge: a completed change waits for a person's approval before its merge (spool ralph --continue-ready --merge --approve)", specs.approve.name)
      }
      return Intent.Sweep({ dashboard })
    }
    if (given.length > 1) return yield* usage("use only one of --status, --list, --add-context, --clear-context, --remove, --approve and --reject at a time")
    if (args.remove && !worktreeGiven) return yield* usage("--remove goes with --worktree: spool ralph --change <id> --worktree --remove")
    if (Option.isSome(args.addContext) && args.addContext.value.trim() === "") {
      return yield* usage("--add-context needs some text, e.g. --add-context \"use the v2 API\"")
    }
    if (args.json && !args.status && !args.list) return yield* usage("--json goes with --status or --list: spool ralph --list --json")
    const remote = Option.getOrNull(args.remote)
    if (args.list) return Intent.List({ json: args.json, remote })
    if (args.status) return Intent.Status({ json: args.json, remote })
    if (Option.isSome(args.addContext)) return Intent.AddContext({ text: args.addContext.value })
    if (args.remove) return Intent.Remove()
    if (args.reject) return yield* decisionOf(args, "rejected")
    if (approveGiven) return yield* decisionOf(args, "approved")
    if (args.clearContext) return Intent.ClearContext()
    return Intent.Loop({ dashboard })
  })
