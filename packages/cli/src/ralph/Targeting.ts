import { type ChangeId, type LayoutName, layoutNames, Workspace } from "@spool/core"
import { Effect, Option } from "effect"
import { selectChange } from "../ChangeSelection.js"
import { firstChangeHintFor } from "../FirstChange.js"
import { Invocation } from "@spool/app/host"
import { usageError } from "../UsageError.js"
import type { RalphArgs } from "./Options.js"

const usage = usageError

/** `--layout`, checked: the tree to read where a repository holds several; null when not given. */
export const layoutOf = (args: Pick<RalphArgs, "layout">) =>
  Effect.gen(function*() {
    if (Option.isNone(args.layout)) return null
    const name = args.layout.value.trim()
    const layout = layoutNames.find((known) => known === name)
    if (layout === undefined) return yield* usage(`--layout must be one of ${layoutNames.join(", ")}, got '${args.layout.value}'`, "layout")
    return layout satisfies LayoutName
  })

/**
 * `--module` as given (`002`, or a module's directory name, `002_core`): its number, or a usage
 * error; null when not given. Every use of `--module` reads it here.
 */
export const moduleIdOf = (args: Pick<RalphArgs, "module">) =>
  Effect.gen(function*() {
    if (Option.isNone(args.module)) return null
    const number = /^(\d+)(?:_[\w.-]*)?$/.exec(args.module.value.trim())
    if (number === null) return yield* usage(`invalid module id '${args.module.value}': use the module's number, e.g. --module 002`, "module")
    return number[1]!
  })

/** `--module` in a tree without modules (OpenSpec's, spec-kit's) asks for what is not there. */
const refuseModuleWithout = (args: Pick<RalphArgs, "module">) =>
  Effect.gen(function*() {
    const { tree } = yield* Workspace
    if (Option.isSome(args.module) && tree.modulesDir === null) {
      return yield* usage(`--module: a ${tree.title} tree has no modules; name the change with --change`, "module")
    }
  })

/** Resolves `--change` / `--module`, or asks, or explains what is missing. */
export const targetChange = (args: RalphArgs) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    yield* refuseModuleWithout(args)
    const moduleFilter = Option.fromNullable(yield* moduleIdOf(args))
    if (Option.isSome(args.change)) {
      const change = yield* workspace.resolveChange(args.change.value)
      if (Option.isSome(moduleFilter) && change.moduleId !== moduleFilter.value) {
        return yield* usage(
          `change ${change.id} belongs to module ${change.moduleId ?? "(none)"}, not ${moduleFilter.value}; drop --module or pick another change`,
          "module"
        )
      }
      return change
    }
    const active = yield* workspace.activeChanges
    if (active.length === 0) {
      return yield* usage(`there are no active changes under ${workspace.tree.changesDir}/; ${firstChangeHintFor(workspace.tree)}`)
    }
    const candidates = Option.match(moduleFilter, {
      onNone: () => active,
      onSome: (m) => active.filter((id) => id.startsWith(`${m}-`))
    })
    if (Option.isSome(moduleFilter) && candidates.length === 0) {
      return yield* usage(`module ${moduleFilter.value} has no active changes; active changes: ${active.join(", ")}`)
    }
    if (Option.isSome(moduleFilter) && candidates.length === 1) {
      return yield* workspace.resolveChange(candidates[0]!)
    }
    const invocation = yield* Invocation
    const interactive = !args.noInteractive && invocation.stdinIsTTY && !invocation.env.CI
    if (!interactive) {
      return yield* usage(
        `--change is required when spool cannot ask (no terminal, --no-interactive or CI); active changes: ${candidates.join(", ")}`
      )
    }
    if (candidates.length === 1) return yield* workspace.resolveChange(candidates[0]!)
    // Ctrl-C at the question stops spool as it would the loop (exit 130).
    const chosen = yield* selectChange(candidates).pipe(Effect.catchTag("QuitException", () => Effect.interrupt))
    return yield* workspace.resolveChange(chosen)
  })

/** The change `--status` is about; null (every change with loop state) when neither `--change` nor `--module` names one. */
export const statusTarget = (args: RalphArgs) =>
  Option.isSome(args.change) || Option.isSome(args.module)
    ? Effect.map(targetChange(args), (change): ChangeId | null => change.id)
    : Effect.succeed(null)
