import type { LoopOptions, SettingsSource } from "../domain/Domain.js"
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
}
