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

  it("leaves out whole a character cut at the start, in a chunk longer than it keeps, and across chunks", () => {
    const long = makeTextTail(4)
    // é is two bytes: the last four of "ééx" start with the second byte of the first é.
    long.feed("ééx")
    assert.strictEqual(long.text(), "éx")
    const across = makeTextTail(5)
    across.feed("abc")
    across.feedBytes(new TextEncoder().encode("éé"))
    assert.strictEqual(across.text(), "céé")
    across.feed("d")
    assert.strictEqual(across.text(), "éé" + "d")
    assert.strictEqual(makeTextTail(4).text(), "")
  })

  it("keeps a chunk of exactly its size whole, and drops every earlier one", () => {
    const tail = makeTextTail(4)
    tail.feed("ab")
    tail.feed("cd")
    assert.strictEqual(tail.text(), "abcd")
    tail.feed("wxyz")
    assert.strictEqual(tail.text(), "wxyz")
    tail.feed("1")
    assert.strictEqual(tail.text(), "xyz1")
  })

  it("copies bytes fed, so that a buffer reused by its owner does not change what was kept", () => {
    const tail = makeTextTail(16)
    const buffer = new TextEncoder().encode("first")
    tail.feedBytes(buffer)
    buffer.fill(0x7a)
    assert.strictEqual(tail.text(), "first")
  })

  it("keeps nothing with a limit of 0", () => {
    const none = makeTextTail(0)
    none.feed("said")
    none.feedBytes(new TextEncoder().encode("more"))
    assert.strictEqual(none.text(), "")
  })

  it("holds no more than it needs: a long chunk by its end, and no piece the text no longer reaches", () => {
    const tail = makeTextTail(4)
    tail.feed("x".repeat(20))
    assert.strictEqual(tail.held(), 4)
    tail.feed("ab")
    tail.feed("cd")
    // "xxxxab" then "cd": the last four bytes are "abcd", and nothing before them is held.
    assert.strictEqual(tail.held(), 4)
    tail.feed("wxyz")
    assert.strictEqual(tail.held(), 4)
    tail.feed("1")
    assert.strictEqual(tail.held(), 5)
    assert.strictEqual(tail.text(), "xyz1")
  })
})
