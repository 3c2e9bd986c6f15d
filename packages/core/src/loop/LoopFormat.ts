import { type CommitInfo, countTokens, type IterationRecord } from "../domain/Domain.js"
import { formatDuration, oneLine } from "../text/Text.js"
import { describeVerification } from "../verify/CheckResult.js"

export const formatBanner = (iteration: number, maxIterations: number, elapsedMs: number) =>
  `=== spool ralph: iteration ${iteration}/${maxIterations} (elapsed ${formatDuration(elapsedMs)}) ===`

const describeExit = (record: IterationRecord) =>
  record.outcome === "timeout"
    ? "timed out"
    : record.outcome === "interrupted"
    ? "interrupted"
    : record.outcome === "stopped"
    ? "stopped"
    : record.outcome === "limited"
    ? "usage limit"
    : record.signal !== null
    ? `killed by ${record.signal}`
    : `exit ${record.exitCode}`

const describeChanges = (record: IterationRecord) =>
  record.git === null
    ? "changes: n/a"
    : `${record.git.changedFiles} file${record.git.changedFiles === 1 ? "" : "s"} changed`

/** The reasons a claim is set aside: the run that made it failed, or was stopped or interrupted. */
export const SET_ASIDE = { failed: "the run failed", cut: "the run was cut short" } as const

/** What became of an iteration's promise: a claim found, set aside, rejected by a check, only mentions (ignored), or none. */
export const promiseFate = (record: IterationRecord): "found" | "aside" | "rejected" | "ignored" | "none" => {
  // A claim the --verify checks rejected.
  if (record.verify?.some((check) => !check.passed) === true) return "rejected"
  const setAside = record.promises.some((v) => v.reason === SET_ASIDE.failed || v.reason === SET_ASIDE.cut)
  // Records written before set-aside claims were recorded as such still say they were detected.
  const legacyAside = record.completionDetected && record.outcome !== "complete" && record.outcome !== "continue"
  return setAside || legacyAside ? "aside" : record.completionDetected ? "found" : record.promises.length > 0 ? "ignored" : "none"
}

/** What became of the promise: found, set aside (the run failed), ignored (and why), or not found. */
export const describePromise = (record: IterationRecord) => {
  const checks = record.verify ?? []
  if (record.completionDetected && checks.length > 0) {
    return `${checks.every((check) => check.passed) ? "promise found," : "promise rejected:"} ${describeVerification(checks)}`
  }
  const fate = promiseFate(record)
  if (fate === "aside") {
    const failed = record.outcome === "failed" || record.outcome === "timeout"
    return `promise set aside: ${failed ? SET_ASIDE.failed : SET_ASIDE.cut}`
  }
  if (fate === "found") return "promise found"
  if (fate === "none") return "promise not found"
  const reasons = [...new Set(record.promises.map((verdict) => verdict.reason))]
  return `promise ignored: ${reasons.slice(0, 3).join("; ")}${reasons.length > 3 ? `; and ${reasons.length - 3} more` : ""}`
}

/** The one line printed after every iteration. */
export const formatSummary = (record: IterationRecord) =>
  [
    `--- iteration ${record.iteration}: ${describeExit(record)}`,
    formatDuration(record.durationMs),
    describePromise(record),
    describeChanges(record),
    ...(record.commit === null ? [] : [`commit ${record.commit.slice(0, 12)}`]),
    ...(record.usage === null ? [] : [`${countTokens(record.usage)} tokens`]),
    ...(record.error === null ? [] : [`error: ${oneLine(record.error)}`]),
    `-> ${record.outcome}`
  ].join(" | ")

export const formatCommits = (commits: ReadonlyArray<CommitInfo>) =>
  commits.map((c) => `- ${c.hash} ${c.date} ${c.author}: ${c.subject}`).join("\n")

