import { type CommitInfo, countTokens, type IterationRecord } from "../domain/Domain.js"
import { formatDuration, formatTokens } from "../text/Figures.js"
import { oneLine } from "../text/Text.js"
import { describeVerification } from "../domain/CheckResult.js"
import { checkFailure } from "../verify/Verification.js"

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
export const promiseFate = (record: IterationRecord): "found" | "aside" | "rejected" | "declined" | "ignored" | "none" => {
  // A claim the --verify checks rejected: recorded as not detected now, as detected in older records.
  if (record.verify?.some((check) => !check.passed) === true) return "rejected"
  // A claim that stood until its review (--review) did not approve it.
  if (record.outcome === "changes") return "declined"
  const setAside = record.promises.some((v) => v.reason === SET_ASIDE.failed || v.reason === SET_ASIDE.cut)
  // Records written before set-aside claims were recorded as such still say they were detected.
  const legacyAside = record.completionDetected && record.outcome !== "complete" && record.outcome !== "continue"
  return setAside || legacyAside ? "aside" : record.completionDetected ? "found" : record.promises.length > 0 ? "ignored" : "none"
}

/**
 * A record as spool writes it now. Records written before a rejected claim was recorded as a
 * set-aside one is kept it as detected, its promise accepted: read, they say what a new one says.
 */
export const asRecordedNow = (record: IterationRecord): IterationRecord => {
  const failed = record.verify?.find((check) => !check.passed)
  if (failed === undefined || !record.completionDetected) return record
  const reason = checkFailure(failed)
  return {
    ...record,
    completionDetected: false,
    promises: record.promises.map((v) => (v.accepted ? { ...v, accepted: false, reason } : v))
  }
}

/** What became of the promise: found (and verified), rejected by a check, declined by its review, set aside (the run failed), ignored (and why), or not found. */
export const describePromise = (record: IterationRecord) => {
  // Checks run only on a claim that would otherwise stand; they say what became of it.
  const checks = record.verify ?? []
  if (checks.length > 0) {
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
  return `promise ${fate === "declined" ? "declined" : "ignored"}: ${reasons.slice(0, 3).join("; ")}${reasons.length > 3 ? `; and ${reasons.length - 3} more` : ""}`
}

/** The one line printed after every iteration. */
export const formatSummary = (record: IterationRecord) =>
  [
    `--- iteration ${record.iteration}: ${describeExit(record)}`,
    formatDuration(record.durationMs),
    describePromise(record),
    describeChanges(record),
    ...(record.commit === null ? [] : [`commit ${record.commit.slice(0, 12)}`]),
    ...(record.usage === null ? [] : [formatTokens(countTokens(record.usage))]),
    ...(record.error === null ? [] : [`error: ${oneLine(record.error)}`]),
    `-> ${record.outcome}`
  ].join(" | ")

export const formatCommits = (commits: ReadonlyArray<CommitInfo>) =>
  commits.map((c) => `- ${c.hash} ${c.date} ${c.author}: ${c.subject}`).join("\n")

