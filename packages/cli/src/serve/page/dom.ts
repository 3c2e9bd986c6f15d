/**
 * The page's few ways to make and change nodes. Every word is set as text (`textContent`, text
 * nodes), never parsed: nothing an agent prints, nor any name, becomes markup. Each setter writes
 * only what changed, so a node whose words stay the same is left alone (a selection in it, a
 * tooltip over it, survive the next event).
 */

const SVG = "http://www.w3.org/2000/svg"

export type Child = Node | string | null | false

export const el = <K extends keyof HTMLElementTagNameMap>(tag: K, className?: string | null, text?: string): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

export const svg = <K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number> = {}): SVGElementTagNameMap[K] => {
  const node = document.createElementNS(SVG, tag)
  setAttributes(node, attributes)
  return node
}

export const setAttributes = (node: Element, attributes: Record<string, string | number>) => {
  for (const [name, value] of Object.entries(attributes)) {
    if (node.getAttribute(name) !== String(value)) node.setAttribute(name, String(value))
  }
}

export const append = <P extends Node>(parent: P, ...children: ReadonlyArray<Child>): P => {
  for (const child of children) {
    if (child === null || child === false) continue
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child)
  }
  return parent
}

export const clear = (node: Node) => {
  while (node.firstChild) node.removeChild(node.firstChild)
}

/** A node's words, written only when they differ. */
export const setText = (node: Node, text: string) => {
  if (node.textContent !== text) node.textContent = text
}

/** A class, written only when it differs. */
export const setClass = (node: Element, className: string) => {
  if (node.getAttribute("class") !== className) node.setAttribute("class", className)
}

/** A node's children made `children`, in order: those already there stay, moved only when out of place. */
export const setChildren = (parent: Node, children: ReadonlyArray<Node>) => {
  const wanted = new Set(children)
  for (const node of Array.from(parent.childNodes)) if (!wanted.has(node)) parent.removeChild(node)
  children.forEach((child, i) => {
    if (parent.childNodes[i] !== child) parent.insertBefore(child, parent.childNodes[i] ?? null)
  })
}

/**
 * Nodes kept by key: `sync` makes the parent's children one node per item, in the items' order,
 * reusing the node made for the same key before (updated by `update`) and making one for a new key.
 */
export const keyed = <T, N extends Node>(
  parent: Node,
  key: (item: T) => string,
  make: (item: T) => N,
  update: (node: N, item: T) => void
) => {
  let nodes = new Map<string, N>()
  return (items: ReadonlyArray<T>) => {
    const next = new Map<string, N>()
    const ordered = items.map((item) => {
      const k = key(item)
      const node = next.get(k) ?? nodes.get(k) ?? make(item)
      next.set(k, node)
      update(node, item)
      return node
    })
    nodes = next
    setChildren(parent, ordered)
  }
}

/** A status or outcome as a coloured badge; `setBadge` turns one into another in place. */
export const badge = (status: string) => setBadge(el("span"), status)

export const setBadge = (node: HTMLElement, status: string) => {
  setClass(node, "badge " + status)
  setText(node, status.replace(/-/g, " "))
  return node
}

const ticks = new WeakMap<Element, () => string>()

/** A node whose words follow the clock (an elapsed time, `3m ago`): the page redraws it each second. */
export const ticking = <N extends Element>(node: N, render: () => string): N => {
  node.setAttribute("data-tick", "1")
  ticks.set(node, render)
  setText(node, render())
  return node
}

/** Redraws the ticking nodes in `root`. */
export const tick = (root: ParentNode) => {
  for (const node of Array.from(root.querySelectorAll("[data-tick]"))) {
    const render = ticks.get(node)
    if (render) setText(node, render())
  }
}
