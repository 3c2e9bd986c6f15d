// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest"
import { listView } from "../../src/serve/page/list.js"
import { loopOf, shell } from "./views.js"

const rowOf = (app: HTMLElement, id: string) => app.querySelector<HTMLTableRowElement>(`tr[data-change="${id}"]`)!
const cells = (row: HTMLTableRowElement) => Array.from(row.cells, (cell) => cell.textContent)

describe("the list of loops", () => {
  let app: HTMLElement
  beforeEach(() => {
    app = shell()
  })

  it("shows one row per loop, with its status, iteration, spend, tasks, outcome and branch, and a summary", () => {
    listView(app, () => {}).update({ repository: "greeter", loops: [loopOf("001-a"), loopOf("001-b", { status: "complete", tasks: { complete: 3, shelved: 1, total: 4 }, spend: { costUsd: null, tokens: null }, lastOutcome: null, branch: null })] })
    expect(app.querySelector("h1")!.textContent).toBe("Loops")
    expect(app.querySelector(".summary")!.textContent).toBe("1 complete · 1 running · 2 in all")
    expect(Array.from(app.querySelectorAll("th"), (th) => th.textContent)).toEqual(["Change", "Status", "Iteration", "Elapsed", "Spend", "Tasks", "Last outcome", "Branch", "Updated"])
    const [name, status, iteration, , spend, tasks, outcome, branch] = cells(rowOf(app, "001-a"))
    expect([name, status, iteration, spend, tasks, outcome, branch]).toEqual(["001-a", "running", "2 of 12", "$0.13 · 5,000 tokens", "1/4", "continue", "spool/001-a"])
    const b = cells(rowOf(app, "001-b"))
    // Shelved tasks are done: the count and the bar say the same.
    expect([b[4], b[5], b[6], b[7]]).toEqual(["–", "4/4 (1 shelved)", "–", "–"])
    expect(rowOf(app, "001-b").querySelector<HTMLElement>(".bar-fill")!.style.width).toBe("100%")
    expect(rowOf(app, "001-a").querySelector("a")!.getAttribute("href")).toBe("#/001-a")
  })

  it("says how to start a loop when none has run", () => {
    listView(app, () => {}).update({ repository: "greeter", loops: [] })
    expect(app.querySelector(".empty")!.textContent).toContain("No loop has run in this repository yet.")
    expect(app.querySelector("table")).toBeNull()
  })

  it("keeps each row's nodes from one event to the next, changing only the words that changed", () => {
    const view = listView(app, () => {})
    view.update({ repository: "greeter", loops: [loopOf("001-a"), loopOf("001-b")] })
    const row = rowOf(app, "001-a")
    const branch = row.cells[7]!.firstChild
    view.update({ repository: "greeter", loops: [loopOf("001-a", { iteration: 3, status: "complete", lastOutcome: "complete" }), loopOf("001-b")] })
    expect(rowOf(app, "001-a")).toBe(row)
    expect(row.cells[7]!.firstChild).toBe(branch)
    expect([row.cells[1]!.textContent, row.cells[2]!.textContent, row.cells[6]!.textContent]).toEqual(["complete", "3 of 12", "complete"])
    expect(row.querySelector(".badge")!.className).toBe("badge complete")
    // A loop gone leaves, a new one comes, in change-id order as sent.
    view.update({ repository: "greeter", loops: [loopOf("001-0"), loopOf("001-a")] })
    expect(Array.from(app.querySelectorAll("tr[data-change]"), (tr) => tr.getAttribute("data-change"))).toEqual(["001-0", "001-a"])
    expect(rowOf(app, "001-a")).toBe(row)
  })

  it("shows a change's problem under its name, and its name as text however it reads", () => {
    const view = listView(app, () => {})
    view.update({ repository: "r", loops: [loopOf("001-a", { problem: "<b>state.json</b> is not JSON" })] })
    expect(app.querySelector(".problem")!.textContent).toBe("<b>state.json</b> is not JSON")
    expect(app.querySelector(".problem b")).toBeNull()
    view.update({ repository: "r", loops: [loopOf("001-a")] })
    expect(app.querySelector(".problem")).toBeNull()
  })

  it("opens a change when its row is clicked", () => {
    const opened: Array<string> = []
    listView(app, (id) => opened.push(id)).update({ repository: "r", loops: [loopOf("001-a")] })
    rowOf(app, "001-a").cells[2]!.dispatchEvent(new MouseEvent("click", { bubbles: true }))
    expect(opened).toEqual(["001-a"])
  })
})
