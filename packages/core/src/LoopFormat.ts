import { type CommitInfo, countTokens, type IterationRecord } from "./Domain.js"

/** `1h02m`, `3m12s`, `12.3s`, `450ms`. */
export const formatDuration = (ms: number): string => {
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`
  const totalSeconds = Math.round(ms / 1000)
  const hours = Math.floor(totalSeconds / 3600)
  const minutes = Math.floor((totalSeconds % 3600) / 60)
  const seconds = totalSeconds % 60
  return hours > 0
    ? `${hours}h${String(minutes).padStart(2, "0")}m`
    : `${minutes}m${String(seconds).padStart(2, "0")}s`
}

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

/** Whitespace collapsed, cut at `max` characters. */
export const oneLine = (text: string, max = 200) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** The reasons a claim is set aside: the run that made it failed, or was stopped or interrupted. */
export const SET_ASIDE = { failed: "the run failed", cut: "the run was cut short" } as const

/** What became of an iteration's promise: a claim found, a claim set aside, only mentions (ignored), or none. */
export const promiseFate = (record: IterationRecord): "found" | "aside" | "ignored" | "none" => {
  const setAside = record.promises.some((v) => v.reason === SET_ASIDE.failed || v.reason === SET_ASIDE.cut)
  // Records written before set-aside claims were recorded as such still say they were detected.
  const legacyAside = record.completionDetected && record.outcome !== "complete" && record.outcome !== "continue"
  return setAside || legacyAside ? "aside" : record.completionDetected ? "found" : record.promises.length > 0 ? "ignored" : "none"
}

/** What became of the promise: found, set aside (the run failed), ignored (and why), or not found. */
export const describePromise = (record: IterationRecord) => {
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
