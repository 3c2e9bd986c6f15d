import type { LoopOptions, SandboxSettings, SettingsSource } from "@spool/core"
import type { AgentChoice } from "../agents/Harnesses.js"
import type { NoticeRequest } from "../notices/Notices.js"

/** A git remote the loop is kept on, under a lease of this many milliseconds. */
export interface RemoteRequest {
  readonly name: string
  readonly leaseTtlMs: number
}

/** What every loop of a run or a sweep is asked to be: plain values, checked when the run starts. */
export interface LoopRequest {
  /** The person's prompt; empty: implement the change proposal. */
  readonly prompt: string
  readonly options: LoopOptions
  readonly agent: AgentChoice
  /**
   * The agents to go on with when the one running meets a usage limit, in order of preference, as
   * written: `<harness>[:<model>]`, or `command:<command line>`. Each takes `agent`'s other settings
   * (`allowAll`). Empty: none.
   */
  readonly fallback: ReadonlyArray<string>
  /** Take `agent` and the fallbacks in turn, one iteration each, rather than only on a limit. */
  readonly rotate: boolean
  /**
   * The reviewers of a claim that passed the checks, as written (the form `fallback` takes); each
   * must approve before the change completes. Empty: none.
   */
  readonly review: ReadonlyArray<string>
  /** Rejections by the reviewers in a run before the loop stops as `review-rejected`. */
  readonly maxReviews: number
  /** Run in a worktree of its own. */
  readonly worktree: boolean
  /** Go on with the change's last run. */
  readonly resume: boolean
  /** The loop kept on a git remote; null: here. */
  readonly remote: RemoteRequest | null
  /** When the loop must have ended, as epoch ms; null: no deadline. */
  readonly deadline: number | null
  readonly notices: NoticeRequest
  /** Every agent and check in a sandbox, with these additions to its walls; null: none. */
  readonly sandbox: SandboxSettings | null
  /** Where the options came from, for the loop's state and `--status`. */
  readonly settings: SettingsSource
}

/** One loop on one change (its id, or a prefix of it that names one change). */
export interface RunRequest extends LoopRequest {
  readonly change: string
}
