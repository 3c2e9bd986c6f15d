/** One change's page: made once for the change, then each event's detail written into its nodes. */
import type { DashboardDetail, DashboardIteration } from "@spool/core"
import { agentsView, hasSeveralAgents } from "./agents.js"
import { chartView } from "./charts.js"
import { append, badge, clear, el, keyed, setBadge, setChildren, setClass, setText, ticking } from "./dom.js"
import { ago, clock, count, duration, elapsedOf, isLive, money } from "./format.js"
import { iterationsView } from "./iterations.js"
import { iterationOf } from "./list.js"
import { reviewsView } from "./reviews.js"
import { textPane } from "./textPane.js"

const stat = (label: string) => {
  const value = el("div", "value")
  const sub = el("div", "sub")
  const card = append(el("div", "card stat"), el("div", "label", label), value)
  const update = (subText: string | null) => setChildren(card, [card.firstChild!, value, ...(subText === null ? [] : [sub])])
  return { card, value, sub, update }
}

/** What the spend card says: the cost and the tokens under it, the tokens alone, or nothing. */
const spendStat = (spend: DashboardDetail["loop"]["spend"]) =>
  spend.costUsd !== null
    ? { value: money(spend.costUsd), sub: count(spend.tokens) + " tokens" }
    : spend.tokens !== null
    ? { value: count(spend.tokens), sub: "tokens" }
    : { value: "–", sub: "none reported" }

export const detailView = (app: HTMLElement) => {
  clear(app)
  const back = el("a", "back", "← All loops")
  back.href = "#/"
  const name = el("h1", "change-title")
  const status = badge("none")
  const heading = append(el("div", "heading"), append(el("div", "title"), name, status))
  const meta = el("div", "meta")
  const syncMeta = keyed<readonly [string, string | (() => string)], HTMLSpanElement>(
    meta,
    ([key]) => key,
    ([key]) => el("span", key === "branch" ? "mono" : null),
    (node, [, text]) => typeof text === "string" ? setText(node, text) : ticking(node, text)
  )
  const problem = el("div", "callout")
  const iteration = stat("Iteration")
  iteration.value.setAttribute("data-field", "iteration")
  const elapsed = stat("Elapsed")
  const spend = stat("Spend")
  const tasks = stat("Tasks")
  const outcome = stat("Last outcome")
  const outcomeBadge = el("span")
  const stats = append(el("div", "stats"), iteration.card, elapsed.card, spend.card, tasks.card, outcome.card)
  const stop = el("div", "callout")
  const abandoned = el("div", "callout")
  const waiting = el("div", "callout")
  const durationChart = chartView()
  const spendChart = chartView()
  const filesChart = chartView()
  const charts = append(el("div", "charts"), durationChart.card, spendChart.card, filesChart.card)
  const output = textPane("Output", "output", "output", true)
  const journal = textPane("Error journal", "", "journal", false)
  const panes = append(el("div", "grid2"), output.card, journal.card)
  const iterations = iterationsView()
  const agents = agentsView()
  const reviews = reviewsView()

  const update = (detail: DashboardDetail) => {
    const { loop } = detail
    const several = hasSeveralAgents(detail)
    setText(name, loop.changeId)
    setBadge(status, loop.status)
    syncMeta([
      ...(detail.run ? [["run", "run " + detail.run] as const] : []),
      ...(loop.branch ? [["branch", loop.branch] as const] : []),
      ...(loop.notMerged ? [["merge", loop.notMerged] as const] : []),
      ...(several && detail.agent ? [["agent", "agent " + detail.agent] as const] : []),
      ...(detail.sandbox ? [["sandbox", "sandboxed (" + detail.sandbox.runtime + "): hosts " + (detail.sandbox.hosts.join(", ") || "none")] as const] : []),
      ...(detail.startedAt ? [["started", "started " + clock(detail.startedAt)] as const] : []),
      ...(loop.updatedAt ? [["updated", () => "updated " + ago(loop.updatedAt!)] as const] : [])
    ])
    setText(problem, loop.problem ?? "")

    setText(iteration.value, iterationOf(loop))
    iteration.update(null)
    ticking(elapsed.value, () => duration(elapsedOf(loop)))
    elapsed.update(null)
    const spent = spendStat(loop.spend)
    setText(spend.value, spent.value)
    setText(spend.sub, spent.sub)
    spend.update(spent.sub)
    const t = loop.tasks
    setText(tasks.value, t.total === 0 ? "–" : t.complete + " of " + t.total)
    setText(tasks.sub, t.total === 0 ? "no tasks.md" : t.shelved > 0 ? t.shelved + " shelved" : "complete")
    tasks.update(tasks.sub.textContent)
    setClass(outcome.value, loop.lastOutcome === null ? "value faint" : "value")
    if (loop.lastOutcome === null) setText(outcome.value, "–")
    else setChildren(outcome.value, [setBadge(outcomeBadge, loop.lastOutcome)])
    outcome.update(null)

    setClass(stop, "callout" + (loop.status === "complete" ? " complete" : ""))
    setText(stop, detail.stopMessage ?? "")
    setText(abandoned, "no process runs this loop: it was killed, or its machine stopped; go on with spool ralph --change " + loop.changeId + " --resume")
    setText(waiting, detail.resumeAt ? "waiting for a usage limit to lift; resumes at " + clock(detail.resumeAt) : "")

    // The charts follow the current run; the table lists every run the history's end holds.
    const runs = detail.iterations.filter((it) => it.run === detail.run)
    const charted = runs.length > 0 ? runs : detail.iterations
    const hasCost = charted.some((it) => it.costUsd !== null)
    const chart = (name: string, title: string, value: (it: DashboardIteration) => number | null, format: (v: number) => string, empty: string) =>
      ({ name, title, iterations: charted, value, format, empty })
    durationChart.update(chart("duration", "Duration per iteration", (it) => it.durationMs, duration, ""))
    spendChart.update(hasCost
      ? chart("cost", "Cost per iteration", (it) => it.costUsd, money, "")
      : chart("tokens", "Tokens per iteration", (it) => it.tokens, count, "This agent reports no cost or tokens."))
    filesChart.update(chart("files", "Files changed per iteration", (it) => it.changedFiles, count, "git reported no changes."))

    const out = detail.output
    output.update({
      note: out === null ? "" : "iteration " + out.iteration + (isLive(loop) ? " · live" : "") + (out.truncated ? " · last 64 KiB" : ""),
      text: out === null ? "" : out.text,
      empty: "No output yet.",
      source: out === null ? "" : out.run + "/" + out.iteration
    })
    journal.update({
      note: detail.journal.truncated ? "last 32 KiB" : "errors.md",
      text: detail.journal.text,
      empty: "No failed iteration journaled.",
      source: "journal"
    })
    iterations.update(detail.iterations, detail.run, hasCost, several)
    agents.update(detail)
    reviews.update(detail)

    setChildren(app, [
      back,
      heading,
      meta,
      ...(loop.problem ? [problem] : []),
      stats,
      ...(several ? [agents.card] : []),
      ...(detail.reviews !== null ? [reviews.card] : []),
      ...(detail.stopMessage ? [stop] : []),
      ...(loop.status === "abandoned" ? [abandoned] : []),
      ...(detail.resumeAt && loop.status === "waiting" ? [waiting] : []),
      charts,
      panes,
      iterations.card
    ])
  }
  return { update }
}

/** The page of a change without loop state (yet). */
export const renderMissing = (app: HTMLElement, changeId: string) => {
  clear(app)
  const back = el("a", "back", "← All loops")
  back.href = "#/"
  append(app, back, append(el("div", "card"), append(el("div", "card-body"),
    el("p", "empty", "No loop state for " + changeId + " (yet). This page shows it once a loop runs on it."))))
}
