import type { Palette } from "./Colour.js"
import { exitCodeOf, Outcome } from "./ExitCode.js"
import { firstChangeHint } from "./FirstChange.js"

const usageTags = new Set(["UsageError", "ChangeError", "WorkspaceNotFoundError", "LayoutError", "UnsupportedGuardError", "WorktreeError"])
/** Another loop has the change, or took it: not a failure of this one (exit 73). */
const busyTags = new Set(["LockError", "LockLostError"])

/** Turns a failure into the one line the user sees and how spool ended. */
export const describeFailure = (error: unknown): { readonly message: string; readonly outcome: Outcome; readonly exitCode: number } => {
  const tagged = error as { readonly _tag?: string; readonly message?: string; readonly cwd?: string; readonly layout?: string }
  const message = tagged._tag === "WorkspaceNotFoundError" && tagged.layout === undefined
    ? `no .spool/ directory (nor .ito/, openspec/ or .specify/) found in ${tagged.cwd} or any parent directory; run spool in your repository, or ${firstChangeHint}`
    : typeof tagged.message === "string" && tagged.message !== ""
    ? tagged.message
    : String(error)
  const outcome = tagged._tag !== undefined && busyTags.has(tagged._tag)
    ? Outcome.Busy()
    : Outcome.Failed({ usage: tagged._tag !== undefined && usageTags.has(tagged._tag) })
  return { message: message.split("\n")[0]!, outcome, exitCode: exitCodeOf(outcome) }
}

/** `spool: <message>`, the prefix in red when `p` colours. */
export const errorLine = (p: Palette, message: string) => `${p.red("spool:")} ${message}\n`
