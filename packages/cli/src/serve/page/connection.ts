/**
 * The page's link to spool: server-sent events (`/events`, `/events/<change-id>`), a snapshot at
 * once and one each time it changes; and the badge that says how the link is.
 */

/** The page's URL's token, passed on with every request it makes. */
export const withToken = (url: string, token: string | null) =>
  token === null ? url : url + (url.indexOf("?") === -1 ? "?" : "&") + "token=" + encodeURIComponent(token)

export const setConnection = (connection: HTMLElement, state: string, label?: string | null) => {
  connection.className = "connection " + state
  const text = connection.querySelector(".label")
  if (text) text.textContent = label || state
}

export interface Listener {
  readonly onData: (data: unknown) => void
  /** The stream closed for good (refused, not found): spool looks again in a while. */
  readonly onClosed: () => void
}

/**
 * One stream at a time: `listen` closes the one before. An `end` event says spool stopped serving,
 * having sent the loops' last state: that state stays shown, and the badge says why.
 */
export const connector = (connection: HTMLElement, token: string | null, retry: () => void) => {
  let source: EventSource | null = null
  let again: ReturnType<typeof setTimeout> | null = null
  let ended: string | null = null
  const listen = (path: string, listener: Listener) => {
    if (source) source.close()
    if (again) clearTimeout(again)
    const es = new EventSource(withToken(path, token))
    source = es
    es.onopen = () => {
      ended = null
      setConnection(connection, "live")
    }
    es.onmessage = (event) => {
      if (source !== es) return
      setConnection(connection, "live")
      listener.onData(JSON.parse(event.data))
    }
    es.addEventListener("end", (event) => {
      if (source !== es) return
      es.close()
      ended = (event as MessageEvent<string>).data
      setConnection(connection, "ended", ended)
    })
    es.onerror = () => {
      if (source !== es) return
      setConnection(connection, ended === null ? "reconnecting" : "ended", ended)
      if (es.readyState === 2) {
        listener.onClosed()
        again = setTimeout(retry, 3000)
      }
    }
  }
  const close = () => {
    if (source) source.close()
    if (again) clearTimeout(again)
    source = null
  }
  return { listen, close }
}
