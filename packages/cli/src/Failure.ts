import { ExitCode } from "./ExitCode.js"

const usageTags = new Set(["UsageError", "ChangeError", "WorkspaceNotFoundError"])

/** Turns a failure into the one line the user sees and the exit code. */
export const describeFailure = (error: unknown): { readonly message: string; readonly exitCode: number } => {
  const tagged = error as { readonly _tag?: string; readonly message?: string }
  const message = typeof tagged.message === "string" && tagged.message !== "" ? tagged.message : String(error)
  return {
    message: message.split("\n")[0]!,
    exitCode: tagged._tag !== undefined && usageTags.has(tagged._tag) ? ExitCode.Usage : ExitCode.Failed
  }
}
