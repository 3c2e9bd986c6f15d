/**
 * The dashboard's page: the list of loops at `#/`, a change's page at `#/<change-id>`, each made
 * once when it is opened and updated in place by every event after.
 */
import type { DashboardDetail } from "@spool/core"
import { connector, withToken } from "./connection.js"
import { detailView, renderMissing } from "./detail.js"
import { append, clear, el, tick } from "./dom.js"
import { listView, type LoopsView } from "./list.js"

export const startPage = () => {
  const token = new URLSearchParams(window.location.search).get("token")
  const app = document.getElementById("app")!
  const repo = document.getElementById("repo")!
  const connection = document.getElementById("connection")!
  let current: { readonly view: "list" | "detail"; readonly changeId: string | null } | null = null
  let shown = false
  // The view in `app`, kept while the route stays: a stream opened again updates it, never remakes it.
  let list: ReturnType<typeof listView> | null = null
  let detail: ReturnType<typeof detailView> | null = null
  let repositoryKnown = false

  const setTitle = () => {
    document.title = (current?.view === "detail" ? current.changeId + " · " : "") + (repo.textContent || "spool") + " · spool"
  }
  const setRepository = (name: string) => {
    if (!name) return
    repositoryKnown = true
    if (repo.textContent !== name) repo.textContent = name
    setTitle()
  }
  // The detail's events carry no repository name: the list has it.
  const fetchRepository = () => {
    if (repositoryKnown) return
    fetch(withToken("/api/loops", token), { headers: { accept: "application/json" } })
      .then((response) => response.ok ? response.json() as Promise<LoopsView> : null)
      .then((data) => { if (data) setRepository(data.repository) })
      .catch(() => {})
  }

  const events = connector(connection, token, () => route())
  const navigate = (changeId: string) => { window.location.hash = "#/" + encodeURIComponent(changeId) }

  const route = () => {
    const hash = window.location.hash
    if (hash.indexOf("#/") === 0 && hash.length > 2) {
      let changeId = hash.slice(2)
      try {
        changeId = decodeURIComponent(changeId)
      } catch {
        // Shown as it is: the server finds no such change.
      }
      if (current?.view !== "detail" || current.changeId !== changeId) {
        current = { view: "detail", changeId }
        shown = false
        detail = null
        clear(app)
        append(app, el("p", "loading", "Loading " + changeId + "…"))
      }
      events.listen("/events/" + encodeURIComponent(changeId), {
        onData: (data) => {
          const next = data as DashboardDetail | null
          if (next === null) {
            detail = null
            shown = false
            return renderMissing(app, changeId)
          }
          detail ??= detailView(app)
          detail.update(next)
          shown = true
          setTitle()
        },
        onClosed: () => { if (!shown) renderMissing(app, changeId) }
      })
      fetchRepository()
    } else {
      if (current?.view !== "list") list = null
      current = { view: "list", changeId: null }
      events.listen("/events", {
        onData: (data) => {
          const loops = data as LoopsView
          setRepository(loops.repository)
          list ??= listView(app, navigate)
          list.update(loops)
        },
        onClosed: () => {}
      })
    }
  }

  const clock = setInterval(() => tick(app), 1000)
  window.addEventListener("hashchange", route)
  route()
  return {
    stop: () => {
      clearInterval(clock)
      window.removeEventListener("hashchange", route)
      events.close()
    }
  }
}
