// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest"
import type { AgentNote, DashboardReview } from "@spool/core"
import { detailView } from "../../src/serve/page/detail.js"
import { clock } from "../../src/serve/page/format.js"
import { detailOf, iterationOf, loopOf, shell } from "./views.js"

const text = (app: HTMLElement, selector: string) => app.querySelector(selector)!.textContent
const all = (app: HTMLElement, selector: string) => Array.from(app.querySelectorAll(selector), (node) => node.textContent)

describe("a change's page", () => {
  let app: HTMLElement
  beforeEach(() => {
    app = shell()
  })

  it("shows the change: its heading, stats, charts, output, journal and iterations", () => {
    detailView(app).update(detailOf("001-a", {
      iterations: [iterationOf(1), iterationOf(2, { outcome: "failed", checks: [{ command: "pnpm test", exitCode: 1, signal: null, timedOut: false, durationMs: 2000, passed: false }] })],
      journal: { text: "iteration 2 failed\n", truncated: false }
    }))
    expect(text(app, "a.back")).toBe("← All loops")
    expect(text(app, "h1.change-title")).toBe("001-a")
    expect(text(app, ".heading .badge")).toBe("running")
    expect(all(app, ".meta span").slice(0, 2)).toEqual(["run r1", "spool/001-a"])
    expect(all(app, ".stat .label")).toEqual(["Iteration", "Elapsed", "Spend", "Tasks", "Last outcome"])
    expect(text(app, "[data-field=iteration]")).toBe("2 of 12")
    expect(all(app, ".stat .sub")).toEqual(["5,000 tokens", "complete"])
    expect(all(app, ".chart h2")).toEqual(["Duration per iteration", "Cost per iteration", "Files changed per iteration"])
    expect(app.querySelectorAll("[data-chart=duration] rect.bar")).toHaveLength(2)
    expect(app.querySelectorAll("[data-chart=duration] rect.bar.failed")).toHaveLength(1)
    expect(text(app, "[data-chart=duration] rect.bar.failed title")).toBe("#2 · 2.0s · failed")
    expect(text(app, "[data-chart=cost] .card-note")).toBe("last $0.0200 · max $0.0200")
    expect(text(app, "[data-pane=output]")).toBe("line one\n")
    expect(text(app, "[data-pane=journal]")).toBe("iteration 2 failed\n")
    expect(all(app, "table.iterations tbody tr td:first-child")).toEqual(["2", "1"])
    expect(all(app, "table.iterations .check.failed")).toEqual(["✗ pnpm test · exit 1, 2.0s"])
    expect(all(app, "table.iterations th")[4]).toBe("Cost")
  })

  it("says that a run was sandboxed, with the hosts its agent could reach, and says nothing of walls a run had not", () => {
    const view = detailView(app)
    view.update(detailOf("001-a", { sandbox: { runtime: "bubblewrap", hosts: ["api.anthropic.com", "127.0.0.1:4000"], denyRead: [], passEnv: [] } }))
    expect(all(app, ".meta span")).toContain("sandboxed (bubblewrap): hosts api.anthropic.com, 127.0.0.1:4000")
    view.update(detailOf("001-a", { sandbox: { runtime: "bubblewrap", hosts: [], denyRead: [], passEnv: [] } }))
    expect(all(app, ".meta span")).toContain("sandboxed (bubblewrap): hosts none")
    view.update(detailOf("001-a"))
    expect(all(app, ".meta span").some((line) => line?.startsWith("sandboxed"))).toBe(false)
  })

  it("of a run with several agents: names the agent of the last iteration, each agent's spend and the agent of each iteration; of one agent, none of it", () => {
    const note = (agent: string, fields: Partial<AgentNote> = {}): AgentNote =>
      ({ agent, harness: agent.split(":")[0]!, model: null, iterations: 0, costUsd: null, tokens: 0, limitedUntil: null, ...fields })
    const view = detailView(app)
    view.update(detailOf("001-a", {
      agent: "codex:gpt-5.5",
      agents: [note("claude", { iterations: 3, costUsd: 1.2, tokens: 9000, limitedUntil: "2025-01-01T15:00:00.000Z" }), note("codex:gpt-5.5", { iterations: 2, tokens: 15200 }), note("gemini")],
      iterations: [iterationOf(1, { agent: "claude", outcome: "limited" }), iterationOf(2, { agent: "codex:gpt-5.5" })]
    }))
    expect(all(app, ".meta span")).toContain("agent codex:gpt-5.5")
    expect(text(app, ".agents h2")).toBe("Agents")
    expect(all(app, ".agents .agent")).toEqual([
      "claude 3 iterations $1.20 · limited until " + clock("2025-01-01T15:00:00.000Z"),
      "codex:gpt-5.5 2 iterations (15.2k tokens, cost unknown)",
      "gemini 0 iterations"
    ])
    expect(all(app, ".agents .agent.current")).toEqual(["codex:gpt-5.5 2 iterations (15.2k tokens, cost unknown)"])
    expect(all(app, "table.iterations td .agent")).toEqual(["codex:gpt-5.5", "claude"])
    // The same run with one agent: the page reads as ever.
    view.update(detailOf("001-a", { agents: [note("claude", { iterations: 2 })], iterations: [iterationOf(1, { agent: "claude" })] }))
    expect(app.querySelector(".agents")).toBeNull()
    expect(all(app, ".meta span").some((line) => line?.startsWith("agent"))).toBe(false)
    expect(app.querySelectorAll("table.iterations td .agent")).toHaveLength(0)
  })

  it("of a run with reviews: the reviews and the reviewers' spend apart from the agents', each iteration's reviews with their findings as tooltips", () => {
    const review = (reviewer: string, verdict: DashboardReview["verdict"], findings: string | null, durationMs: number): DashboardReview =>
      ({ reviewer, verdict, findings, durationMs, costUsd: null, tokens: null })
    const view = detailView(app)
    view.update(detailOf("001-a", {
      loop: loopOf("001-a", { spend: { costUsd: 1.5, tokens: 60_000 } }),
      reviews: { reviews: 3, approved: 2, costUsd: 0.31, tokens: 12_000 },
      iterations: [
        iterationOf(1, { outcome: "changes", reviews: [review("claude", "changes", "add a test for <script> in the parser", 62_000)] }),
        iterationOf(2, { outcome: "complete", reviews: [review("claude", "approve", null, 40_000), review("codex:gpt-5.5", "approve", null, 3000)] })
      ]
    }))
    expect(text(app, ".reviews h2")).toBe("Reviews")
    expect(text(app, ".reviews .review-total")).toBe("3 (2 approved), $0.31, 12.0k tokens")
    expect(text(app, ".reviews .card-note")).toBe("the reviewers' part of the spend")
    // The spend card keeps the run's spend as its guards count it.
    expect(all(app, ".stat .value")[2]).toBe("$1.50")
    expect(all(app, "table.iterations th")[7]).toBe("Checks, reviews")
    expect(all(app, "table.iterations .check.review")).toEqual([
      "✓ claude approved · 40.0s",
      "✓ codex:gpt-5.5 approved · 3.0s",
      "✗ claude asked for changes · 1m02s"
    ])
    const changes = app.querySelector("table.iterations .check.review.failed")!
    expect(changes.getAttribute("title")).toBe("add a test for <script> in the parser")
    expect(changes.querySelector("script")).toBeNull()
    expect(app.querySelector("table.iterations .check.review.passed")!.hasAttribute("title")).toBe(false)
    expect(all(app, "table.iterations .badge")).toEqual(["complete", "changes"])
    // The same row, its review unchanged, keeps its node (its tooltip stays up); one that changes is rewritten.
    view.update(detailOf("001-a", {
      reviews: { reviews: 2, approved: 0, costUsd: null, tokens: null },
      iterations: [
        iterationOf(1, { outcome: "changes", reviews: [review("claude", "changes", "add a test for <script> in the parser", 62_000)] }),
        iterationOf(2, { outcome: "changes", reviews: [review("claude", "none", "no verdict: it ended without one", 40_000)] })
      ]
    }))
    expect(app.querySelector("table.iterations .check.review.failed[title^='add a test']")).toBe(changes)
    expect(text(app, ".reviews .review-total")).toBe("2 (0 approved), cost unknown")
    expect(all(app, "table.iterations .check.review")).toEqual(["✗ claude gave no verdict · 40.0s", "✗ claude asked for changes · 1m02s"])
    // A run without reviews: no card, no review line, the column as ever.
    view.update(detailOf("001-a"))
    expect(app.querySelector(".reviews")).toBeNull()
    expect(app.querySelectorAll("table.iterations .check.review")).toHaveLength(0)
    expect(all(app, "table.iterations th")[7]).toBe("Checks")
    expect(all(app, "table.iterations tbody td:last-child")).toEqual(["–"])
  })

  it("says what there is not yet: no output, no journal, no iteration", () => {
    detailView(app).update(detailOf("001-a", { iterations: [], output: null }))
    expect(text(app, "[data-pane=output]")).toBe("No output yet.")
    expect(text(app, "[data-pane=journal]")).toBe("No failed iteration journaled.")
    expect(text(app, "[data-chart=duration] .chart-empty")).toBe("No iteration has ended yet.")
    expect(text(app, ".section .empty")).toBe("No iteration has ended yet.")
  })

  it("keeps its nodes from one event to the next: the heading, the output's text node, the chart's bars, the table's rows", () => {
    const view = detailView(app)
    view.update(detailOf("001-a", { iterations: [iterationOf(1)] }))
    const [heading, output, bar, row] = [app.querySelector("h1"), app.querySelector("[data-pane=output]")!.firstChild, app.querySelector("rect.bar"), app.querySelector("table.iterations tbody tr")]
    const tip = bar!.querySelector("title")!.firstChild
    view.update(detailOf("001-a", {
      loop: loopOf("001-a", { iteration: 3 }),
      iterations: [iterationOf(1), iterationOf(2)],
      output: { run: "r1", iteration: 3, text: "line one\n", truncated: false }
    }))
    expect(app.querySelector("h1")).toBe(heading)
    expect(app.querySelector("[data-pane=output]")!.firstChild).toBe(output)
    expect(app.querySelector("[data-chart=duration] rect.bar")).toBe(bar)
    // The first bar's tooltip stays the same node: one being read stays up.
    expect(bar!.querySelector("title")!.firstChild).toBe(tip)
    expect(app.querySelectorAll("[data-chart=duration] rect.bar")).toHaveLength(2)
    expect(app.querySelectorAll("table.iterations tbody tr")[1]).toBe(row)
    expect(text(app, "[data-field=iteration]")).toBe("3 of 12")
    expect(text(app, ".grid2 .card-note")).toBe("iteration 3 · live")
  })

  it("appends new output to the text there, so a selection in it survives the next event", () => {
    const view = detailView(app)
    view.update(detailOf("001-a"))
    const pane = app.querySelector("[data-pane=output]")!
    const range = document.createRange()
    range.setStart(pane.firstChild!, 0)
    range.setEnd(pane.firstChild!, 4)
    document.getSelection()!.addRange(range)
    view.update(detailOf("001-a", { output: { run: "r1", iteration: 2, text: "line one\nline two\n", truncated: false } }))
    expect(pane.textContent).toBe("line one\nline two\n")
    expect(pane.childNodes).toHaveLength(1)
    expect(document.getSelection()!.toString()).toBe("line")
    // The next iteration's output replaces it.
    view.update(detailOf("001-a", { output: { run: "r1", iteration: 3, text: "fresh\n", truncated: false } }))
    expect(pane.textContent).toBe("fresh\n")
  })

  it("shows what the agent prints as text, never as markup", () => {
    const printed = "<script>window.__pwned=1</script><b>bold?</b><img src=x onerror=alert(1)>\n"
    const view = detailView(app)
    view.update(detailOf("001-a", { output: { run: "r1", iteration: 2, text: printed, truncated: false }, journal: { text: printed, truncated: false } }))
    view.update(detailOf("001-a", { output: { run: "r1", iteration: 2, text: printed + printed, truncated: false }, journal: { text: printed, truncated: false } }))
    expect(text(app, "[data-pane=output]")).toBe(printed + printed)
    expect(text(app, "[data-pane=journal]")).toBe(printed)
    expect(app.querySelectorAll("script, b, img")).toHaveLength(0)
  })

  it("says how a loop ended, and how to go on with an abandoned one", () => {
    const view = detailView(app)
    view.update(detailOf("001-a", { loop: loopOf("001-a", { status: "complete" }), stopMessage: "every task is done" }))
    expect(all(app, ".callout")).toEqual(["every task is done"])
    expect(app.querySelector(".callout")!.className).toBe("callout complete")
    view.update(detailOf("001-a", { loop: loopOf("001-a", { status: "abandoned" }) }))
    expect(all(app, ".callout")).toEqual(["no process runs this loop: it was killed, or its machine stopped; go on with spool ralph --change 001-a --resume"])
  })

  it("charts tokens when the agent reports no cost, and says so when it reports neither", () => {
    const view = detailView(app)
    view.update(detailOf("001-a", { iterations: [iterationOf(1, { costUsd: null })] }))
    expect(all(app, ".chart h2")[1]).toBe("Tokens per iteration")
    expect(app.querySelector("[data-chart=tokens]")).not.toBeNull()
    view.update(detailOf("001-a", { iterations: [iterationOf(1, { costUsd: null, tokens: null })] }))
    expect(text(app, "[data-chart=tokens] .chart-empty")).toBe("This agent reports no cost or tokens.")
  })
})
