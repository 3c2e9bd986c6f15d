import {
  type AgentNote,
  agentSpend,
  type ChangeId,
  formatAgentSpend,
  formatCost,
  formatDuration,
  formatMoney,
  formatReviewSpend,
  formatSpend,
  formatTaskProgress,
  formatTokens,
  hasSeveralAgents,
  type IterationRecord,
  liveChanges,
  loadAllStatus,
  loadStatus,
  type LoopState,
  type LoopSummary,
  loopSummary,
  type MergeNote,
  oneLine,
  promiseFate,
  reviewLine,
  reviewSpend,
  type SettingsSource,
  statusJson,
  type StatusReport,
  withLiveness, type SandboxNote } from "@spool/core"
import { Effect } from "effect"
import { type Palette, palette } from "./Colour.js"

const pad = (text: string, width: number) => text.padEnd(width)

/** Spend against the caps, and the breakers' counters: `$0.42 of $5.00 · 15200 tokens · 1h02m of 8h00m · stall 2/5 · failures 0/5`. */
const guardsLine = (state: LoopState, summary: LoopSummary) => {
  const g = state.guards
  if (g === null) return null
  const of = (spent: string, cap: string | null) => (cap === null ? spent : `${spent} of ${cap}`)
  return [
    of(formatCost(g.costUsd), g.maxCostUsd === null ? null : formatMoney(g.maxCostUsd)),
    of(formatTokens(g.tokens), g.maxTokens === null ? null : String(g.maxTokens)),
    of(formatDuration(summary.elapsedMs ?? 0), g.maxDurationMs === null ? null : formatDuration(g.maxDurationMs)),
    g.stallIterations === 0 ? "stall breaker off" : `stall ${g.stalledIterations}/${g.stallIterations}`,
    g.maxConsecutiveFailures === 0 ? "failure breaker off" : `failures ${g.consecutiveFailures}/${g.maxConsecutiveFailures}`,
    g.maxLimitWaitMs === 0 ? "usage limits not waited for" : `usage limits waited up to ${formatDuration(g.maxLimitWaitMs)}`
  ].join(" · ")
}

/** `.spool/config.json (verify, max-iterations); command line (harness)`. */
const settingsLine = (source: SettingsSource) => {
  const parts = [
    ...(source.file === null || source.fromFile.length === 0 ? [] : [`${source.file} (${source.fromFile.join(", ")})`]),
    ...(source.fromCommandLine.length === 0 ? [] : [`command line (${source.fromCommandLine.join(", ")})`])
  ]
  return parts.length === 0 ? "defaults" : parts.join("; ")
}

/** `bubblewrap; hosts api.anthropic.com, registry.npmjs.org; unreadable too ~/private; passed in NPM_TOKEN`. */
const sandboxLine = (note: SandboxNote) =>
  [
    note.runtime,
    `hosts ${note.hosts.length === 0 ? "none" : note.hosts.join(", ")}`,
    ...(note.denyRead.length === 0 ? [] : [`unreadable too ${note.denyRead.join(", ")}`]),
    ...(note.passEnv.length === 0 ? [] : [`passed in ${note.passEnv.join(", ")}`])
  ].join("; ")

/** `claude 3 iterations $1.20, limited until 2026-11-28T03:00:00.000Z`. */
const agentLine = (note: AgentNote) => `${formatAgentSpend(agentSpend(note))}${note.limitedUntil === null ? "" : `, limited until ${note.limitedUntil}`}`

/** A run of several agents: the agent of its current (or last) iteration, then a line an agent with what it ran and spent. */
const agentsLines = (summary: LoopSummary): Array<string> =>
  hasSeveralAgents(summary)
    ? [
      ...(summary.agent === null ? [] : [`agent:     ${summary.agent}`]),
      ...summary.agents.map((note, i) => `${pad(i === 0 ? "agents:" : "", 11)}${agentLine(note)}`)
    ]
    : []

const promiseColumn = (r: IterationRecord) => {
  const fate = promiseFate(r)
  return fate === "none" ? "-" : fate
}

const statusColour = (p: Palette, status: string) =>
  status === "complete"
    ? p.green(status)
    : status === "running" || status === "waiting"
    ? p.cyan(status)
    : status === "abandoned"
    ? p.red(status)
    : status === "max-iterations" || status === "stopped" || status === "usage-limit" || status === "deadline" || status === "review-rejected"
    ? p.yellow(status)
    : p.red(status)

/** A completed loop whose merge was not made says so beside its status: `complete, not merged: conflict in src/app.ts`. */
const notMerged = (merge: MergeNote | null) => (merge !== null && !merge.merged ? merge.text : null)

const statusWords = (p: Palette, status: string, merge: MergeNote | null) => {
  const unmerged = notMerged(merge)
  return unmerged === null ? statusColour(p, status) : p.yellow(`${status}, ${unmerged}`)
}

export const statusText = (report: StatusReport, p: Palette = palette(false)): string => {
  const summary = loopSummary(report)
  const lines: Array<string> = [`change:    ${report.changeId}`]
  const { state } = report
  if (state === null) {
    lines.push("status:    no loop has run for this change yet")
  } else {
    lines.push(
      summary.abandoned
        ? `status:    ${statusColour(p, "abandoned")} (its state says ${state.status}, but no process runs it: pid ${state.pid} was killed, ` +
          `or its machine stopped); go on with spool ralph --change ${report.changeId} --resume, or start it afresh`
        : `status:    ${statusWords(p, state.status, state.merge ?? null)}`,
      `iteration: ${state.iteration} of at most ${state.maxIterations} (at least ${state.minIterations})`,
      `run:       ${state.run}, started ${state.startedAt}, updated ${state.updatedAt}`
    )
    if (state.branch !== undefined) lines.push(`branch:    ${state.branch}`)
    if (state.worktree !== undefined) lines.push(`worktree:  ${state.worktree}`)
    if (state.settings !== undefined) lines.push(`settings:  ${settingsLine(state.settings)}`)
    if (state.sandbox !== undefined) lines.push(`sandbox:   ${sandboxLine(state.sandbox)}`)
    lines.push(...agentsLines(summary))
    const guards = guardsLine(state, summary)
    if (guards !== null) lines.push(`guards:    ${guards}`)
    if (state.status === "waiting" && state.resumeAt !== null) lines.push(`waiting:   for the usage limit until ${state.resumeAt}`)
    if (state.stopReason !== null) lines.push(`ended:     ${state.stopReason}${state.stopMessage === null ? "" : ` (${state.stopMessage})`}`)
    if (state.status === "usage-limit" && state.resumeAt !== null) lines.push(`resume:    run spool again after ${state.resumeAt}`)
  }
  if (summary.tasks.total > 0) lines.push(`tasks:     ${formatTaskProgress(summary.tasks)}`)
  const unsent = report.notifyFailures ?? []
  if (unsent.length > 0) {
    const count = `${unsent.length} notice${unsent.length === 1 ? "" : "s"} of this run could not be told`
    lines.push(`notices:   ${p.yellow(count)}; the last: ${unsent.at(-1)!.replace(/^\S+ /, "")}`)
  }
  const sum = summary.usage
  if (sum !== null) lines.push(`usage:     ${formatTokens(sum.tokens)}, ${formatCost(sum.cost)} over the iterations below`)
  // The reviewers' spend, apart from the agents' (the guards above count both).
  const reviews = reviewSpend(report.history)
  if (reviews !== null) lines.push(`reviews:   ${formatReviewSpend(reviews)}`)
  if (report.history.length > 0) {
    lines.push("", p.bold(`recent iterations (last ${report.history.length}):`))
    // With several agents, each iteration names the one that ran it.
    const several = hasSeveralAgents(summary)
    const outcomeOf = (r: IterationRecord) => (several ? `${pad(r.outcome, 13)}${r.agent ?? "-"}` : r.outcome)
    lines.push(
      p.dim(
        `  ${pad("iter", 5)}${pad("started", 22)}${pad("duration", 10)}${pad("exit", 9)}${pad("promise", 9)}${pad("changed", 9)}${pad("commit", 9)}${
          several ? `${pad("outcome", 13)}agent` : "outcome"
        }`
      )
    )
    let run: string | null = null
    for (const r of report.history) {
      // Iterations of several runs are told apart by a line naming each run where its iterations begin.
      if (r.run !== run) {
        run = r.run
        lines.push(p.dim(`  run ${r.run}${r.run === state?.run ? " (the latest)" : ""}`))
      }
      const exit = r.signal !== null ? r.signal : r.exitCode === null ? "-" : String(r.exitCode)
      lines.push(
        `  ${pad(String(r.iteration), 5)}${pad(r.startedAt.replace(/\.\d+Z$/, "Z"), 22)}${pad(formatDuration(r.durationMs), 10)}${
          pad(exit, 9)
        }${pad(promiseColumn(r), 9)}${pad(r.git === null ? "n/a" : String(r.git.changedFiles), 9)}${
          pad(r.commit === null ? "-" : r.commit.slice(0, 7), 9)
        }${outcomeOf(r)}`,
        // Each review of the iteration's claim under it: who, and what it made of the claim.
        ...(r.reviews ?? []).map((review) => `${pad("", 7)}${oneLine(reviewLine(review), 160)}`)
      )
    }
  }
  if (report.skipped > 0) {
    lines.push(`(${report.skipped} damaged history line${report.skipped === 1 ? "" : "s"} skipped)`)
  }
  return lines.join("\n")
}

/** `--status` without `--change`: a line per change with loop state, in columns. */
export const statusListText = (rows: ReadonlyArray<LoopSummary>, p: Palette = palette(false)): string => {
  const cells = rows.map((row) => [
    row.changeId,
    notMerged(row.merge) === null ? row.shownStatus : `${row.shownStatus}, ${notMerged(row.merge)}`,
    row.maxIterations === null ? "-" : `${row.iteration} of ${row.maxIterations}`,
    formatSpend(row.spend) || "-",
    row.lastOutcome ?? "-",
    row.branch ?? ""
  ])
  const header = ["change", "status", "iteration", "spend", "last outcome", "branch"]
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => line[i]!.length)) + 2)
  // The status is coloured after padding: escape sequences take no room on the screen.
  const line = (values: ReadonlyArray<string>, colour: (column: number, text: string) => string) =>
    values.map((value, i) => `${colour(i, value)}${i === values.length - 1 ? "" : " ".repeat(widths[i]! - value.length)}`).join("").trimEnd()
  return [
    p.dim(line(header, (_, text) => text)),
    ...cells.map((values, i) => line(values, (column, text) => (column === 1 ? statusWords(p, rows[i]!.shownStatus, rows[i]!.merge) : text))),
    p.dim("one change in full: spool ralph --status --change <id>")
  ].join("\n")
}

/** What `--status` says when no loop has run on any change. */
export const noLoopsText = "no loop has run in this repository yet; start one with: spool ralph --change <id>"

/** Where `--status` writes: the terminal's printer and its palette (the fast path's own, or the CLI's writer). */
export interface StatusOutput {
  readonly print: (text: string) => Effect.Effect<void>
  readonly palette: Palette
  /**
   * The changes whose loops still run, to tell a loop that was killed from one that runs: the locks
   * of live processes here (the default), or with `--remote` the leases held there; null says nothing.
   */
  readonly live?: Effect.Effect<ReadonlySet<string> | null>
}

/** `--status` of one change: its state, its recent iterations and its tasks (`--json`: one object). */
export const printStatus = (changeId: ChangeId, json: boolean, out: StatusOutput) =>
  Effect.gen(function*() {
    const report = withLiveness(yield* loadStatus(changeId), yield* (out.live ?? liveChanges))
    yield* out.print(json ? JSON.stringify(statusJson(report), null, 2) : statusText(report, out.palette))
  })

/**
 * `--status` without a change: every change with loop state, a line each (`--json`: an array of
 * the objects `--status --change` prints). With one, it shows that change in full, as a person
 * with one loop wants; `--json` keeps the array, so a script reads one shape however many loops run.
 */
export const printAllStatus = (json: boolean, out: StatusOutput) =>
  Effect.flatMap(Effect.zipWith(loadAllStatus, out.live ?? liveChanges, (reports, live) => reports.map((report) => withLiveness(report, live))), (reports) =>
    out.print(
      json
        ? JSON.stringify(reports.map(statusJson), null, 2)
        : reports.length === 0
        ? noLoopsText
        : reports.length === 1
        ? statusText(reports[0]!, out.palette)
        : statusListText(reports.map(loopSummary), out.palette)
    ))

/** `--status` of the change given, or (null) of every change with loop state. */
export const showStatus = (changeId: ChangeId | null, json: boolean, out: StatusOutput) =>
  changeId === null ? printAllStatus(json, out) : printStatus(changeId, json, out)
