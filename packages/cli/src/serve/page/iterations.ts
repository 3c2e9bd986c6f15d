/** A change's table of iterations, newest first, its rows kept by run and iteration. */
import type { DashboardIteration } from "@spool/core"
import type { CheckResult } from "@spool/core"
import { append, badge, el, keyed, setBadge, setChildren, setText } from "./dom.js"
import { clock, count, duration, money } from "./format.js"
import { reviewLine } from "./reviews.js"

/** `✓ pnpm test · 3.1s`, `✗ pnpm lint · exit 1, 2.0s`. */
export const checkLine = (c: CheckResult) => {
  const how = c.timedOut ? "timed out" : c.signal ? c.signal : "exit " + c.exitCode
  return (c.passed ? "✓ " : "✗ ") + c.command + " · " + (c.passed ? "" : how + ", ") + duration(c.durationMs)
}

interface Row {
  readonly it: DashboardIteration
  readonly currentRun: string | null
  readonly hasCost: boolean
  /** The run has several agents: each row names the one that ran it. */
  readonly several: boolean
}

const makeRow = () => {
  const row = el("tr")
  const run = el("div", "faint mono")
  const number = el("td", "num")
  const numberText = document.createTextNode("")
  append(number, numberText)
  const outcomeBadge = badge("none")
  const outcome = append(el("td"), outcomeBadge)
  const agent = el("div", "faint mono agent")
  const cells = [el("td", "muted hide-narrow"), el("td", "num"), el("td", "num"), el("td", "num"), el("td", "mono muted")] as const
  const checks = el("td")
  const list = el("div", "checks")
  const reviews = el("div", "checks review-list")
  const none = el("span", "faint", "–")
  let reviewsShown = ""
  append(row, number, outcome, ...cells, checks)
  const update = ({ it, currentRun, hasCost, several }: Row) => {
    setText(numberText, String(it.iteration))
    setText(run, it.run)
    setChildren(number, it.run === currentRun ? [numberText] : [numberText, run])
    setBadge(outcomeBadge, it.outcome)
    setText(agent, it.agent ?? "")
    setChildren(outcome, several && it.agent ? [outcomeBadge, agent] : [outcomeBadge])
    const [started, took, spent, files, commit] = cells
    setText(started, clock(it.startedAt))
    setText(took, duration(it.durationMs))
    setText(spent, hasCost ? money(it.costUsd) : count(it.tokens))
    setText(files, count(it.changedFiles))
    setText(commit, it.commit ? it.commit.slice(0, 8) : "–")
    const lines = it.checks.map(checkLine)
    if (lines.join("\n") !== Array.from(list.childNodes, (n) => n.textContent).join("\n")) {
      setChildren(list, it.checks.map((c, i) => el("span", "check " + (c.passed ? "passed" : "failed"), lines[i]!)))
    }
    // The reviews of the claim, under its checks; what a reviewer found is its line's tooltip.
    const reviewed = it.reviews.map(reviewLine)
    const key = it.reviews.map((review, i) => reviewed[i] + "\n" + (review.findings ?? "")).join("\n\n")
    if (key !== reviewsShown) {
      reviewsShown = key
      setChildren(reviews, it.reviews.map((review, i) => {
        const line = el("span", "check review " + (review.verdict === "approve" ? "passed" : "failed"), reviewed[i]!)
        if (review.findings !== null) line.title = review.findings
        return line
      }))
    }
    const shown = [...(lines.length === 0 ? [] : [list]), ...(reviewed.length === 0 ? [] : [reviews])]
    setChildren(checks, shown.length === 0 ? [none] : shown)
  }
  return { row, update }
}

export const iterationsView = () => {
  const note = el("span", "card-note")
  const card = append(el("div", "card section"), append(el("div", "card-head"), el("h2", null, "Iterations"), note))
  const empty = append(el("div", "card-body"), el("p", "empty", "No iteration has ended yet."))
  const spentHead = el("th", "num")
  const checksHead = el("th")
  const head = el("tr")
  append(head, el("th", "num", "#"), el("th", null, "Outcome"), el("th", "hide-narrow", "Started"), el("th", "num", "Duration"), spentHead,
    el("th", "num", "Files"), el("th", null, "Commit"), checksHead)
  const body = el("tbody")
  const table = append(el("table", "iterations"), append(el("thead"), head), body)
  const rows = new WeakMap<Node, ReturnType<typeof makeRow>>()
  const sync = keyed<Row, HTMLTableRowElement>(body, ({ it }) => it.run + "/" + it.iteration, () => {
    const made = makeRow()
    rows.set(made.row, made)
    return made.row
  }, (row, item) => rows.get(row)!.update(item))
  const update = (iterations: ReadonlyArray<DashboardIteration>, currentRun: string | null, hasCost: boolean, several: boolean) => {
    setText(note, iterations.length + " recorded")
    setText(spentHead, hasCost ? "Cost" : "Tokens")
    setText(checksHead, iterations.some((it) => it.reviews.length > 0) ? "Checks, reviews" : "Checks")
    sync(iterations.slice().reverse().map((it) => ({ it, currentRun, hasCost, several })))
    setChildren(card, [card.firstChild!, iterations.length === 0 ? empty : table])
  }
  return { card, update }
}
