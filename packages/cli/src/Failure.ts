import type {
  ChangeError,
  GitError,
  HarnessError,
  LayoutError,
  LockError,
  LockLostError,
  LoopFailedError,
  RemoteError,
  StateError,
  UnsupportedGuardError,
  WorkspaceNotFoundError,
  WorktreeError
} from "@spool/core"
import type { RequestError } from "@spool/app"
import { Match } from "effect"
import type { Palette } from "./Colour.js"
import { exitCodeOf, Outcome } from "./ExitCode.js"
import { firstChangeHint } from "./FirstChange.js"
import type { DashboardError } from "./serve/DashboardServer.js"
import type { UsageError } from "./UsageError.js"

/** Every error that reaches the edge of `spool`; `failures` says how each ends it. */
export type Failure =
  | UsageError
  | RequestError
  | ChangeError
  | WorkspaceNotFoundError
  | LayoutError
  | UnsupportedGuardError
  | WorktreeError
  | LockError
  | LockLostError
  | StateError
  | HarnessError
  | LoopFailedError
  | GitError
  | RemoteError
  | DashboardError

/** What the user is told of a failure, and how spool ends with it. */
export interface DescribedFailure {
  readonly message: string
  readonly outcome: Outcome
}

const said = (error: Failure) => error.message !== "" ? error.message : String(error)

/** Bad options, an unknown change, no tree of changes (or several): exit 2. */
const usage = (error: Failure, message = said(error)): DescribedFailure => ({ message, outcome: Outcome.Failed({ usage: true }) })
/** Another loop has the change, or took it: not a failure of this one (exit 73). */
const busy = (error: Failure): DescribedFailure => ({ message: said(error), outcome: Outcome.Busy() })
/** A fatal error: exit 1. */
const failed = (error: Failure): DescribedFailure => ({ message: said(error), outcome: Outcome.Failed({ usage: false }) })

/**
 * Each failure's words and ending, by its tag. `Match.valueTags` wants a case for every tag of
 * `Failure` and no other, and `describeFailure` takes nothing else: an error new to the edge is a
 * compile error until it has its line here.
 */
export const failures = {
  UsageError: usage,
  RequestError: usage,
  ChangeError: usage,
  WorkspaceNotFoundError: (error: WorkspaceNotFoundError) =>
    usage(
      error,
      error.layout === undefined
        ? `no .spool/ directory (nor .ito/, openspec/ or .specify/) found in ${error.cwd} or any parent directory; run spool in your repository, or ${firstChangeHint}`
        : said(error)
    ),
  LayoutError: usage,
  UnsupportedGuardError: usage,
  WorktreeError: usage,
  LockError: busy,
  LockLostError: busy,
  StateError: failed,
  HarnessError: failed,
  LoopFailedError: failed,
  GitError: failed,
  RemoteError: failed,
  DashboardError: failed
} as const

/** Turns a failure into the one line the user sees and how spool ended. */
export const describeFailure = (error: Failure): DescribedFailure & { readonly exitCode: number } => {
  const { message, outcome } = Match.valueTags(error, failures)
  return { message: message.split("\n")[0]!, outcome, exitCode: exitCodeOf(outcome) }
}

/** `spool: <message>`, the prefix in red when `p` colours. */
export const errorLine = (p: Palette, message: string) => `${p.red("spool:")} ${message}\n`
