import { describe, expect, it } from "@effect/vitest"
import * as ByteBatches from "../src/bytes/ByteBatches.js"

describe("pooled batch buffers", () => {
  it("reuses a buffer only once it is sealed and every batch of it is back", () => {
    const buffer = ByteBatches.take()
    const a = ByteBatches.share(buffer.subarray(0, 10))
    const b = ByteBatches.share(buffer.subarray(10, 20))
    ByteBatches.give(a)
    ByteBatches.seal(buffer)
    // One batch is still out: a new buffer.
    const other = ByteBatches.take()
    expect(other.buffer).not.toBe(buffer.buffer)
    ByteBatches.give(b)
    // Giving a batch back twice, or bytes from elsewhere, changes nothing.
    ByteBatches.give(b)
    ByteBatches.give(new Uint8Array(10))
    const again = ByteBatches.take()
    expect(again.buffer).toBe(buffer.buffer)
    expect(ByteBatches.take().buffer).not.toBe(buffer.buffer)
    ByteBatches.seal(other)
    ByteBatches.seal(again)
  })

  it("does not reuse a buffer still being filled, whatever is given back", () => {
    const buffer = ByteBatches.take()
    const a = ByteBatches.share(buffer.subarray(0, 5))
    ByteBatches.give(a)
    expect(ByteBatches.take().buffer).not.toBe(buffer.buffer)
    ByteBatches.seal(buffer)
  })
})
