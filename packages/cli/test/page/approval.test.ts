// @vitest-environment happy-dom
import { type ApprovalNote, ChangeId, dashboardDetail, dashboardLoop, type LoopState, loopSummary, mergeNoteOf } from "@spool/core"
import { beforeEach, describe, expect, it } from "vitest"
import { detailView } from "../../src/serve/page/detail.js"
import { listView } from "../../src/serve/page/list.js"
import { shell } from "./views.js"

// A change a `--merge --approve` sweep completed: its state as the sweep leaves it, with a person's
// word on its merge (and the merge note that word gives), shown on the dashboard.

const completed: LoopState = {
  changeId: "001-01_a",
  branch: "spool/001-01_a",
  run: "20261129T061929Z-tcir",
  status: "complete",
  iteration: 1,
  minIterations: 1,
  maxIterations: 20,
  startedAt: "2026-11-29T06:19:29.539Z",
  updatedAt: "2026-11-29T06:19:31.540Z",
  pid: 3212,
  stopReason: "complete",
  stopMessage: "complete: the promise was accepted at iteration 1",
  resumeAt: null,
  guards: null
}

/** The state with `decision` on its run's merge, as the sweep (awaiting) or a person (approved, rejected) writes it. */
const decided = (decision: ApprovalNote["decision"], why?: string): LoopState => {
  const note: ApprovalNote = { decision, run: completed.run, at: "2026-11-29T06:19:32.000Z", ...(why === undefined ? {} : { why }) }
  return { ...completed, approval: note, merge: mergeNoteOf(note) }
}

const reading = (state: LoopState) => ({ changeId: ChangeId.make(state.changeId), state, history: [], skipped: 0, tasks: { tasks: [] } })
const loopOfState = (state: LoopState) => dashboardLoop(loopSummary(reading(state)))
const statusCell = (app: HTMLElement) => app.querySelector<HTMLTableRowElement>(`tr[data-change="001-01_a"]`)!.cells[1]!

describe("the dashboard, of a change awaiting a person's approval", () => {
  let app: HTMLElement
  beforeEach(() => {
    app = shell()
  })

  it("says `awaiting approval` under its status in its row, and nothing once it is merged", () => {
    const view = listView(app, () => {})
    view.update({ repository: "greeter", loops: [loopOfState(decided("awaiting"))] })
    const cell = statusCell(app)
    expect(cell.querySelector(".badge")!.textContent).toBe("complete")
    expect(cell.querySelector(".muted")!.textContent).toBe("awaiting approval")
    expect(cell.textContent).toBe("completeawaiting approval")
    // A person's word changes what it says; the merge made, it says nothing more.
    view.update({ repository: "greeter", loops: [loopOfState(decided("approved"))] })
    expect(statusCell(app).querySelector(".muted")!.textContent).toBe("approved, not merged yet")
    view.update({ repository: "greeter", loops: [loopOfState({ ...decided("approved"), merge: { merged: true, text: "merged into main (0123abcd)" } })] })
    expect(statusCell(app).textContent).toBe("complete")
    expect(statusCell(app).querySelector(".muted")).toBeNull()
  })

  it("says `awaiting approval` on its page, beside its run and branch", () => {
    detailView(app).update(dashboardDetail(reading(decided("awaiting")), { journal: { text: "", truncated: false }, output: null }))
    expect(app.querySelector(".heading .badge")!.textContent).toBe("complete")
    const meta = Array.from(app.querySelectorAll(".meta span"), (span) => span.textContent)
    expect(meta.slice(0, 3)).toEqual(["run 20261129T061929Z-tcir", "spool/001-01_a", "awaiting approval"])
  })
})
