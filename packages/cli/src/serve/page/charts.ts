/**
 * A chart: one bar per iteration, its height the value, its colour the iteration's outcome, its
 * tooltip (an SVG `<title>`) the numbers. Bars are kept by iteration and moved in place, so a
 * tooltip being read stays up while new iterations come.
 */
import type { DashboardIteration } from "@spool/core"
import { append, el, keyed, setAttributes, setChildren, setClass, setText, svg } from "./dom.js"
import { words } from "./format.js"

export interface ChartSpec {
  readonly name: string
  readonly title: string
  readonly iterations: ReadonlyArray<DashboardIteration>
  readonly value: (iteration: DashboardIteration) => number | null
  readonly format: (value: number) => string
  /** Said when iterations ended but none has a value. */
  readonly empty: string
}

interface Bar {
  readonly iteration: DashboardIteration
  readonly slot: number
  readonly value: number
}

const SLOT = 10

export const chartView = () => {
  const card = el("div", "card chart")
  const title = el("h2")
  const note = el("span", "card-note")
  const body = el("div", "card-body")
  append(card, append(el("div", "card-head"), title, note), body)
  const empty = el("div", "chart-empty")
  const chart = svg("svg", { preserveAspectRatio: "none", role: "img" })
  const base = svg("line", { x1: 0, y1: 100, y2: 100, class: "base" })
  const bars = svg("g")
  append(chart, bars, base)
  const first = el("span")
  const all = el("span")
  const last = el("span")
  const axis = append(el("div", "axis"), first, all, last)
  let max = 0
  let spec: ChartSpec | null = null
  const sync = keyed<Bar, SVGRectElement>(
    bars,
    (bar) => bar.iteration.run + "/" + bar.iteration.iteration,
    () => append(svg("rect", { width: 7, rx: 1 }), svg("title")),
    (rect, { iteration, slot, value }) => {
      const h = max > 0 ? Math.max(value > 0 ? 1.5 : 0, (value / max) * 96) : 0
      setAttributes(rect, { x: slot * SLOT + 1.5, y: 100 - h, height: h })
      setClass(rect, "bar " + iteration.outcome)
      setText(rect.firstChild!, "#" + iteration.iteration + " · " + spec!.format(value) + " · " + words(iteration.outcome))
    }
  )
  const update = (next: ChartSpec) => {
    spec = next
    const { iterations, value, format } = next
    card.setAttribute("data-chart", next.name)
    setText(title, next.title)
    const known = iterations.flatMap((iteration, slot): Array<Bar> => {
      const v = value(iteration)
      return v === null ? [] : [{ iteration, slot, value: v }]
    })
    max = known.reduce((m, bar) => Math.max(m, bar.value), 0)
    const latest = known[known.length - 1]
    setText(note, latest === undefined ? "" : "last " + format(latest.value) + " · max " + format(max))
    if (latest === undefined) {
      setText(empty, iterations.length === 0 ? "No iteration has ended yet." : next.empty)
      setChildren(body, [empty])
      return
    }
    const width = Math.max(iterations.length, 12) * SLOT
    setAttributes(chart, { viewBox: "0 0 " + width + " 100", "aria-label": next.title })
    setAttributes(base, { x2: width })
    sync(known)
    setText(first, "#" + iterations[0]!.iteration)
    setText(all, iterations.length + " iteration" + (iterations.length === 1 ? "" : "s"))
    setText(last, "#" + iterations[iterations.length - 1]!.iteration)
    setChildren(body, [chart, axis])
  }
  return { card, update }
}
