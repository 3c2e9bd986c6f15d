// @vitest-environment happy-dom
import { describe, expect, it } from "vitest"
import { overlap, textPane } from "../../src/serve/page/textPane.js"

describe("a pane of growing text", () => {
  it("finds where the next tail of a log begins in the text shown", () => {
    expect(overlap("abc\n", "abc\ndef\n")).toBe(0)
    expect(overlap("one\ntwo\n", "two\nthree\n")).toBe(4)
    expect(overlap("one\ntwo\n", "other\n")).toBeNull()
  })

  it("cuts the text that slid out of the tail and appends the new, in the same text node", () => {
    const pane = textPane("Output", "output", "output", true)
    const spec = (text: string) => ({ note: "", text, empty: "No output yet.", source: "r1/1" })
    pane.update(spec("one\ntwo\n"))
    const pre = pane.card.querySelector("pre")!
    const node = pre.firstChild
    pane.update(spec("two\nthree\n"))
    expect(pre.textContent).toBe("two\nthree\n")
    expect(pre.firstChild).toBe(node)
  })
})
