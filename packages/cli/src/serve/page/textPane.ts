/**
 * A pane of text that grows: the agent's live output, the error journal. New text is appended to
 * the text node there, and text that slid out of the served tail is cut from its start, so a
 * selection in the pane (and where it is scrolled) survives the next event.
 */
import { append, el, setText } from "./dom.js"

/**
 * Where `next` begins in `shown`, when `next` is `shown` with text cut from its start and text
 * added at its end; null when it is other text.
 */
export const overlap = (shown: string, next: string): number | null => {
  if (next.startsWith(shown)) return 0
  // A tail cut from a log starts at a line: its first line is in the text shown, at each candidate.
  const line = next.indexOf("\n")
  const probe = next.slice(0, Math.min(line === -1 ? next.length : line + 1, 256))
  if (probe === "") return null
  for (let at = shown.indexOf(probe, 1); at !== -1; at = shown.indexOf(probe, at + 1)) {
    if (next.startsWith(shown.slice(at))) return at
  }
  return null
}

export interface TextPaneSpec {
  readonly note: string
  readonly text: string
  /** What the pane says while there is no text. */
  readonly empty: string
  /** Which text it is (a run's iteration): another one replaces the text, never continues it. */
  readonly source: string
}

/** `follow`: the pane keeps to the end of its text while it is scrolled there (a live output). */
export const textPane = (title: string, className: string, pane: string, follow: boolean) => {
  const note = el("span", "card-note")
  const pre = el("pre", "text " + className)
  pre.setAttribute("data-pane", pane)
  const card = append(el("div", "card"), append(el("div", "card-head"), el("h2", null, title), note), pre)
  const content = document.createTextNode("")
  pre.appendChild(content)
  let shown: { readonly text: string; readonly source: string } | null = null
  let first = true
  const update = (spec: TextPaneSpec) => {
    setText(note, spec.note)
    const stick = follow && (first || pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8)
    first = false
    const at = shown === null || shown.source !== spec.source || spec.text === "" ? null : overlap(shown.text, spec.text)
    if (at === null) {
      const text = spec.text === "" ? spec.empty : spec.text
      if (content.data !== text) content.data = text
    } else {
      const kept = shown!.text.length - at
      if (at > 0) content.deleteData(0, at)
      if (spec.text.length > kept) content.appendData(spec.text.slice(kept))
    }
    shown = spec.text === "" ? null : { text: spec.text, source: spec.source }
    if (stick) pre.scrollTop = pre.scrollHeight
  }
  return { card, update }
}
