// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { startPage } from "../../src/serve/page/app.js"
import { detailOf, loopOf, shell } from "./views.js"

/** An event stream the test drives: what spool would send. */
class FakeEventSource extends EventTarget {
  static opened: Array<FakeEventSource> = []
  readyState = 1
  onopen: (() => void) | null = null
  onmessage: ((event: MessageEvent) => void) | null = null
  onerror: (() => void) | null = null
  constructor(readonly url: string) {
    super()
    FakeEventSource.opened.push(this)
  }
  close() {
    this.readyState = 2
  }
  send(data: unknown) {
    this.onmessage?.(new MessageEvent("message", { data: JSON.stringify(data) }))
  }
  end(reason: string) {
    this.dispatchEvent(new MessageEvent("end", { data: reason }))
  }
}

const latest = () => FakeEventSource.opened[FakeEventSource.opened.length - 1]!

describe("the page, following spool's events", () => {
  let page: { stop: () => void }
  let app: HTMLElement
  beforeEach(() => {
    FakeEventSource.opened = []
    vi.stubGlobal("EventSource", FakeEventSource)
    vi.stubGlobal("fetch", () => Promise.resolve({ ok: true, json: () => Promise.resolve({ repository: "greeter", loops: [] }) }))
    window.location.hash = ""
    app = shell()
    page = startPage()
  })
  afterEach(() => {
    page.stop()
    vi.unstubAllGlobals()
  })

  it("lists the loops from /events, names the repository, and says the link is live", () => {
    expect(latest().url).toBe("/events")
    latest().send({ repository: "greeter", loops: [loopOf("001-a")] })
    expect(document.getElementById("repo")!.textContent).toBe("greeter")
    expect(document.title).toBe("greeter · spool")
    expect(app.querySelector("tr[data-change=\"001-a\"]")).not.toBeNull()
    expect(document.getElementById("connection")!.className).toBe("connection live")
  })

  it("keeps the last state shown when spool ends the run, and says why", () => {
    const events = latest()
    events.send({ repository: "greeter", loops: [loopOf("001-a", { status: "complete" })] })
    events.end("run ended")
    expect(events.readyState).toBe(2)
    const connection = document.getElementById("connection")!
    expect([connection.className, connection.querySelector(".label")!.textContent]).toEqual(["connection ended", "run ended"])
    expect(app.querySelector("tr[data-change=\"001-a\"] .badge")!.textContent).toBe("complete")
  })

  it("opens a change at #/<id> from its own stream, and makes its page once for all its events", async () => {
    window.location.hash = "#/001-a"
    window.dispatchEvent(new HashChangeEvent("hashchange"))
    expect(latest().url).toBe("/events/001-a")
    expect(app.textContent).toBe("Loading 001-a…")
    latest().send(detailOf("001-a"))
    const heading = app.querySelector("h1")
    latest().send(detailOf("001-a", { loop: loopOf("001-a", { iteration: 3 }) }))
    expect(app.querySelector("h1")).toBe(heading)
    expect(app.querySelector("[data-field=iteration]")!.textContent).toBe("3 of 12")
    latest().send(null)
    expect(app.querySelector(".empty")!.textContent).toBe("No loop state for 001-a (yet). This page shows it once a loop runs on it.")
  })
})
