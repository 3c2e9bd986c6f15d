import { stderrPalette } from "./Colour.js"
import { ExitCode } from "./ExitCode.js"
import { firstChangeHint } from "./FirstChange.js"

const usageTags = new Set(["UsageError", "ChangeError", "WorkspaceNotFoundError", "UnsupportedGuardError", "WorktreeError"])

/** Turns a failure into the one line the user sees and the exit code. */
export const describeFailure = (error: unknown): { readonly message: string; readonly exitCode: number } => {
  const tagged = error as { readonly _tag?: string; readonly message?: string; readonly cwd?: string }
  const message = tagged._tag === "WorkspaceNotFoundError"
    ? `no .spool/ directory found in ${tagged.cwd} or any parent directory; run spool in your repository, or ${firstChangeHint}`
    : typeof tagged.message === "string" && tagged.message !== ""
    ? tagged.message
    : String(error)
  return {
    message: message.split("\n")[0]!,
    exitCode: tagged._tag !== undefined && usageTags.has(tagged._tag) ? ExitCode.Usage : ExitCode.Failed
  }
}

/** `spool: <message>` on stderr, the prefix in red on a terminal. */
export const writeError = (message: string) => void process.stderr.write(`${stderrPalette().red("spool:")} ${message}\n`)
