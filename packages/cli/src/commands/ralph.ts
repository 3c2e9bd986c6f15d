import { Command } from "@effect/cli"
import { ContextStore, ErrorJournal, HistoryStore, LoopLock, Workspace } from "@spool/core"
import { GitWorktree } from "@spool/git"
import { Effect, Layer, Option } from "effect"
import { lockIdentity } from "../Process.js"
import { type RalphArgs, ralphOptions } from "../ralph/Options.js"
import { runChange } from "../ralph/Run.js"
import { statusTarget, targetChange } from "../ralph/Targeting.js"
import { removeWorktree } from "../ralph/Worktree.js"
import { locate } from "../ralph/WorktreeLocation.js"
import { printStatus } from "../Status.js"
import { UsageError } from "../UsageError.js"

const usage = (message: string) => new UsageError({ message })

const location = locate(process.cwd())

/** Inside a change's worktree, spool works on that change, and a loop runs in that worktree. */
const inWorktree = (args: RalphArgs): RalphArgs =>
  location.worktreeChange === null ? args : {
    ...args,
    change: Option.orElse(args.change, () => Option.some(location.worktreeChange!)),
    worktree: true
  }

/** `spool ralph`: one of its modes (status, add or clear context) or the loop itself. */
const handler = (input: RalphArgs) =>
  Effect.gen(function*() {
    const args = inWorktree(input)
    const modes = [args.status, Option.isSome(args.addContext), args.clearContext, args.remove].filter(Boolean).length
    if (modes > 1) return yield* usage("use only one of --status, --add-context, --clear-context and --remove at a time")
    if (args.remove && !input.worktree) {
      return yield* usage("--remove goes with --worktree: spool ralph --change <id> --worktree --remove")
    }
    if (Option.isSome(args.addContext) && args.addContext.value.trim() === "") {
      return yield* usage("--add-context needs some text, e.g. --add-context \"use the v2 API\"")
    }
    if (args.json && !args.status) return yield* usage("--json goes with --status: spool ralph --status --json")

    if (args.status) return yield* printStatus(yield* statusTarget(args), args.json)
    const change = yield* targetChange(args)
    const contexts = yield* ContextStore
    if (Option.isSome(args.addContext)) {
      yield* contexts.append(change.id, args.addContext.value)
      yield* Effect.sync(() => console.log(`added context for ${change.id}; the loop uses it from its next iteration`))
      return
    }
    if (args.remove) return yield* removeWorktree(change)
    if (args.clearContext) {
      yield* contexts.clear(change.id)
      yield* Effect.sync(() => console.log(`cleared context for ${change.id}`))
      return
    }
    yield* runChange(args, change)
  }).pipe(
    Effect.provide(
      Layer.mergeAll(ContextStore.layer, HistoryStore.layer, ErrorJournal.layer, LoopLock.layer(lockIdentity), GitWorktree.layer).pipe(
        Layer.provideMerge(Workspace.layer(location.workspaceCwd))
      )
    )
  )

const make = <Name extends string>(name: Name, description: string) =>
  Command.make(name, ralphOptions).pipe(Command.withDescription(description), Command.withHandler(handler))

/** `ralph` and `loop` are one command under two names: same options, same handler. */
export const ralph = make("ralph", "Run an agent in a loop on a change until it prints the completion promise")
export const loop = make("loop", "The same as spool ralph")
