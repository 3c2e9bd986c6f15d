import { assert, describe, it } from "@effect/vitest"
import { makeTextTail } from "../src/output/TextTail.js"

describe("the end of what an agent said", () => {
  it("keeps everything while it fits", () => {
    const tail = makeTextTail(100)
    tail.feed("hello ")
    tail.feedBytes(new TextEncoder().encode("world"))
    assert.strictEqual(tail.text(), "hello world")
  })

  it("keeps only the last bytes, starting at a whole character", () => {
    const tail = makeTextTail(8)
    tail.feed("abcdef")
    tail.feed("ééé")
    // "abcdef" + six bytes of é: the last eight bytes start inside "f" ... whole characters only.
    assert.strictEqual(tail.text(), "efééé")
    tail.feed("x".repeat(20))
    assert.strictEqual(tail.text(), "xxxxxxxx")
  })

  it("copies bytes fed, so that a buffer reused by its owner does not change what was kept", () => {
    const tail = makeTextTail(16)
    const buffer = new TextEncoder().encode("first")
    tail.feedBytes(buffer)
    buffer.fill(0x7a)
    assert.strictEqual(tail.text(), "first")
  })
})
