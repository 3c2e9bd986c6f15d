/** The prompt a reviewer gets: the change, the run's work, the checks it passed, and how to give its verdict. */
import { type CheckResult, describeCheck, shown } from "../domain/CheckResult.js"

/** What a reviewer reads, gathered once per review of a claim. */
export interface ReviewMaterial {
  readonly changeId: string
  readonly moduleId: string | null
  readonly proposal: string
  readonly module: string | null
  /** tasks.md as the agent left it; null when the change has none. */
  readonly tasks: string | null
  /** The run's work, cut to size (see `cutDiff`). */
  readonly diff: string
  /** The `--verify` checks the claim passed. */
  readonly checks: ReadonlyArray<CheckResult>
  /** The end of what the agent said in the iteration that claimed completion. */
  readonly closingMessage: string
}

const MAX_CLOSING = 6000

const closing = (text: string) => {
  const flat = text.trim()
  return flat.length > MAX_CLOSING ? `…${flat.slice(flat.length - MAX_CLOSING + 1)}` : flat
}

/** The reviewer's prompt. The verdict's form is written inside sentences, so that echoing the instructions gives none. */
export const reviewPrompt = (material: ReviewMaterial): string => {
  const parts = [
    `# Review of change \`${material.changeId}\``,
    "",
    "You are reviewing the work of a coding agent, which claims the change below is complete. Its work passed the",
    "project's checks. Decide whether it really does what the proposal and its tasks ask: every requirement met,",
    "every ticked task done by the diff, no requirement quietly skipped, tests that would catch a wrong patch.",
    "The repository in your working directory holds the work under review; read any file you need. Do not change",
    "anything: whatever you write there is discarded.",
    "",
    "End your answer with your verdict, alone on its own line: the word approve inside a verdict tag (<verdict>approve</verdict>) when the",
    "work is complete and correct; otherwise the word changes inside it (<verdict>changes</verdict>), on its own line, followed by",
    "what must change, one point per line, naming files. Give exactly one verdict.",
    "",
    `## Proposal`,
    "",
    material.proposal.trim()
  ]
  if (material.module !== null && material.module.trim() !== "") {
    parts.push("", `## Module${material.moduleId === null ? "" : ` (\`${material.moduleId}\`)`}`, "", material.module.trim())
  }
  if (material.tasks !== null && material.tasks.trim() !== "") parts.push("", "## Tasks (as the agent left them)", "", material.tasks.trim())
  parts.push("", "## The work (the run's diff)", "", material.diff)
  if (material.checks.length > 0) {
    parts.push("", "## Checks passed", "", ...material.checks.map((check) => `- \`${shown(check.command)}\`: ${describeCheck(check)}`))
  }
  const said = closing(material.closingMessage)
  if (said !== "") parts.push("", "## The agent's closing message", "", said)
  return `${parts.join("\n")}\n`
}
