import {
  formatAgentsSpend,
  formatDuration,
  formatReviewSpend,
  formatSpend,
  formatTokensShort,
  type SpendFigures,
  sweepAgents,
  type SweepReport,
  sweepReviews,
  sweepSpend,
  type SweepRow
} from "@spool/core"

/** `$0.42, 15.2k tokens`, `15.2k tokens`, or `-` when the agent reported nothing. */
export const describeSpend = (spend: SpendFigures) => formatSpend(spend, { separator: ", ", tokens: formatTokensShort }) || "-"

const outcomeWords: Record<SweepRow["outcome"], string> = {
  complete: "complete",
  failed: "failed",
  stopped: "stopped",
  "max-iterations": "max-iterations",
  "usage-limit": "usage limit",
  deadline: "deadline",
  "review-rejected": "review rejected",
  interrupted: "interrupted",
  busy: "busy",
  "already-complete": "already complete",
  "not-started": "not started"
}

/** A change whose merge was asked for and not made: the headline counts it so, whatever its loop's outcome. */
const notMerged = (row: SweepRow) => row.merge !== null && !row.merge.merged

/** What the headline counts a change as: awaiting approval, not merged, or its outcome. */
const headlineWords = (row: SweepRow) => row.awaitingApproval === true ? "awaiting approval" : notMerged(row) ? "not merged" : outcomeWords[row.outcome]

/** Why a change did not complete or was not merged; for one awaiting approval, how a person gives it. */
const reasonOf = (row: SweepRow): string | null =>
  row.awaitingApproval === true
    ? `awaiting approval: spool ralph --approve ${row.changeId}, or --reject ${row.changeId} "<why>"`
    : notMerged(row)
    ? row.merge!.text
    : row.outcome !== "complete" ? row.message : null

const ran = (row: SweepRow) => row.outcome !== "busy" && row.outcome !== "already-complete" && row.outcome !== "not-started"

/** Columns padded to their widest cell; the last one is not padded. */
const table = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ").trimEnd())
}

/**
 * The sweep's summary: a line a change (outcome, iterations, duration, spend, branch, last commit,
 * merge), the totals (and each agent's, when a loop had several; the reviews and the reviewers'
 * spend, when there were any), and why each change that did not
 * complete (or was not merged) ended so.
 */
export const sweepSummary = (report: SweepReport, options: { readonly merge: string | null }): Array<string> => {
  const header = ["change", "outcome", "iterations", "duration", "spend", "branch", "last commit", ...(options.merge === null ? [] : ["merge"])]
  const body = report.rows.map((row) => [
    row.changeId,
    outcomeWords[row.outcome],
    ran(row) ? String(row.iterations) : "-",
    ran(row) ? formatDuration(row.durationMs) : "-",
    describeSpend(row),
    row.branch ?? "-",
    row.lastCommit?.slice(0, 12) ?? "-",
    ...(options.merge === null ? [] : [row.merge?.text ?? "-"])
  ])
  const counts = new Map<string, number>()
  for (const row of report.rows) counts.set(headlineWords(row), (counts.get(headlineWords(row)) ?? 0) + 1)
  const spend = describeSpend(sweepSpend(report))
  const iterations = report.rows.reduce((n, row) => n + row.iterations, 0)
  const reasons = report.rows.flatMap((row) => {
    const reason = reasonOf(row)
    return reason === null ? [] : [`  ${row.changeId}: ${reason}`]
  })
  const merged = report.rows.filter((row) => row.merge?.merged === true).length
  const agents = sweepAgents(report)
  const reviews = sweepReviews(report)
  return [
    "",
    `=== sweep: ${report.rows.length} change${report.rows.length === 1 ? "" : "s"}: ${[...counts].map(([words, n]) => `${n} ${words}`).join(", ")} ===`,
    ...table([header, ...body]),
    `total: ${iterations} iteration${iterations === 1 ? "" : "s"}${spend === "-" ? "" : `, ${spend}`}` +
      `${options.merge === null ? "" : `, ${merged} merged into ${options.merge}`}`,
    ...(agents.length === 0 ? [] : [`agents: ${formatAgentsSpend(agents)}`]),
    // The reviewers' spend, apart from the agents' (the total above).
    ...(reviews === null ? [] : [`reviews: ${formatReviewSpend(reviews)}`]),
    ...(reasons.length === 0 ? [] : ["why:", ...reasons])
  ]
}
