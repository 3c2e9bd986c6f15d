import type { LoopOptions, SandboxNote, SettingsSource } from "../domain/Domain.js"
import type { Redactor } from "../output/Redact.js"
import type { Change } from "../state/Workspace.js"

/** What one run of the loop is given: the change, the prompt, the options and where the agent works. */
export interface LoopRequest {
  readonly change: Change
  readonly userPrompt: string
  readonly options: LoopOptions
  /** Where the agent works: the repository root. */
  readonly cwd: string
  /** This process, recorded in the state file. */
  readonly pid: number
  /** Applied to everything written to logs and the error journal. */
  readonly redact: Redactor
  /** Where the options came from, for `--status`; absent when not known. */
  readonly settings?: SettingsSource
  /** With `--sandbox`: the walls its agent and checks run in, for `--status`; absent: none. */
  readonly sandbox?: SandboxNote
  /**
   * With `--worktree`: the branch the loop commits to and the worktree's directory holding `.spool/`,
   * named in every state the loop writes and publishes. Null or absent: the main work tree.
   */
  readonly worktree?: LoopWorktree | null
  /**
   * With `--resume`: the change's last run goes on (its iteration numbers, spend, time and counters),
   * or, when it completed, nothing runs. Absent or false: a new run starts.
   */
  readonly resume?: boolean
  /**
   * With `--deadline`: when the run must have ended (epoch ms). No iteration starts that the run's
   * iterations so far say would end after it, one still running then is stopped, and the run ends
   * as `deadline`. Absent or null: none.
   */
  readonly deadline?: number | null
}

/** The worktree a loop runs in, as its state names it. */
export interface LoopWorktree {
  readonly branch: string
  readonly root: string
}
