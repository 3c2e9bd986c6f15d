/** The list of loops: one row per change, kept by change id and updated in place as events come. */
import type { DashboardLoop } from "@spool/core"
import { append, badge, clear, el, keyed, setBadge, setChildren, setText, ticking } from "./dom.js"
import { ago, duration, elapsedOf, spend, taskCount, taskShare, words } from "./format.js"

/** What `/events` sends: the repository's name and its loops. */
export interface LoopsView {
  readonly repository: string
  readonly loops: ReadonlyArray<DashboardLoop>
}

const COLUMNS: ReadonlyArray<readonly [string, string | null]> = [
  ["Change", null], ["Status", null], ["Iteration", "num"], ["Elapsed", "num"], ["Spend", "num"], ["Tasks", null],
  ["Last outcome", null], ["Branch", "hide-narrow"], ["Updated", "num hide-narrow"]
]

const EMPTY = "No loop has run in this repository yet. Start one with spool ralph --change <id>; it shows here as it runs."

/** `2 complete · 1 running · 3 in all`. */
export const summaryOf = (loops: ReadonlyArray<DashboardLoop>) => {
  if (loops.length === 0) return ""
  const counts = new Map<string, number>()
  for (const loop of loops) counts.set(loop.status, (counts.get(loop.status) ?? 0) + 1)
  return [...counts.keys()].sort().map((status) => counts.get(status) + " " + words(status)).join(" · ") + " · " + loops.length + " in all"
}

export const iterationOf = (loop: DashboardLoop) => loop.maxIterations === null ? "–" : loop.iteration + " of " + loop.maxIterations

/** A row's cells, made once; `update` writes a loop's fields into them. */
const makeRow = (navigate: (changeId: string) => void) => (first: DashboardLoop) => {
  const row = el("tr", "link")
  row.setAttribute("data-change", first.changeId)
  const link = el("a", "change", first.changeId)
  link.href = "#/" + encodeURIComponent(first.changeId)
  const problem = el("div", "problem")
  const cells = {
    name: append(el("td"), link),
    status: append(el("td"), badge(first.status)),
    iteration: el("td", "num"),
    elapsed: el("td", "num"),
    spend: el("td", "num"),
    tasks: el("td"),
    outcome: el("td"),
    branch: el("td", "mono muted hide-narrow"),
    updated: el("td", "num muted hide-narrow")
  }
  const track = append(el("span", "bar-track"), el("span", "bar-fill"))
  const progress = append(el("span", "progress"), track, el("span", "num"))
  const noTasks = el("span", "faint", "–")
  const outcome = el("span")
  const noOutcome = el("span", "faint", "–")
  const statusBadge = cells.status.firstChild as HTMLElement
  const notMerged = el("div", "muted")
  append(row, ...Object.values(cells))
  row.addEventListener("click", (event) => {
    if ((event.target as Element).tagName !== "A") navigate(first.changeId)
  })
  const update = (loop: DashboardLoop) => {
    setChildren(cells.name, loop.problem ? [link, problem] : [link])
    setText(problem, loop.problem ?? "")
    setBadge(statusBadge, loop.status)
    // A completed change whose work is not home says why beneath: awaiting approval, a conflict.
    setText(notMerged, loop.notMerged ?? "")
    setChildren(cells.status, loop.notMerged === null ? [statusBadge] : [statusBadge, notMerged])
    setText(cells.iteration, iterationOf(loop))
    ticking(cells.elapsed, () => duration(elapsedOf(loop)))
    setText(cells.spend, spend(loop.spend))
    if (loop.tasks.total === 0) setChildren(cells.tasks, [noTasks])
    else {
      const fill = track.firstChild as HTMLElement
      if (fill.style.width !== taskShare(loop.tasks)) fill.style.width = taskShare(loop.tasks)
      setText(progress.lastChild!, taskCount(loop.tasks))
      setChildren(cells.tasks, [progress])
    }
    if (loop.lastOutcome === null) setChildren(cells.outcome, [noOutcome])
    else setChildren(cells.outcome, [setBadge(outcome, loop.lastOutcome)])
    setText(cells.branch, loop.branch ?? "–")
    ticking(cells.updated, () => loop.updatedAt ? ago(loop.updatedAt) : "–")
  }
  return { row, update }
}

type Row = ReturnType<ReturnType<typeof makeRow>>

/** The list's view in `app`: made once, then `update`d with each event's loops. */
export const listView = (app: HTMLElement, navigate: (changeId: string) => void) => {
  clear(app)
  const summary = el("div", "summary")
  const heading = append(el("div", "heading"), append(el("div", "title"), el("h1", null, "Loops")), summary)
  const empty = append(el("div", "card"), append(el("div", "card-body"), el("p", "empty", EMPTY)))
  const head = el("tr")
  for (const [label, className] of COLUMNS) append(head, el("th", className, label))
  const body = el("tbody")
  const table = append(el("div", "card"), append(el("table", "loops"), append(el("thead"), head), body))
  const rows = new WeakMap<Node, Row>()
  const sync = keyed<DashboardLoop, HTMLTableRowElement>(
    body,
    (loop) => loop.changeId,
    (loop) => {
      const made = makeRow(navigate)(loop)
      rows.set(made.row, made)
      return made.row
    },
    (row, loop) => rows.get(row)!.update(loop)
  )
  return {
    update: (view: LoopsView) => {
      setText(summary, summaryOf(view.loops))
      sync(view.loops)
      setChildren(app, [heading, view.loops.length === 0 ? empty : table])
    }
  }
}
