import { describe, expect, it } from "@effect/vitest"
import { incompleteTail } from "../src/bytes/Utf8Tail.js"

describe("a character cut at the end of bytes", () => {
  it("counts the bytes of a character begun but not finished", () => {
    const tail = (...bytes: Array<number>) => incompleteTail(new Uint8Array(bytes))
    expect(tail()).toBe(0)
    expect(tail(0x61)).toBe(0)
    expect(tail(0xc3)).toBe(1)
    expect(tail(0xc0)).toBe(1)
    expect(tail(0x61, 0xc3, 0xa9)).toBe(0)
    expect(tail(0xe2)).toBe(1)
    expect(tail(0xe0, 0xa0)).toBe(2)
    expect(tail(0x61, 0xe2, 0x82)).toBe(2)
    expect(tail(0xe2, 0x82, 0xac)).toBe(0)
    expect(tail(0xf0)).toBe(1)
    expect(tail(0xf0, 0x9f, 0x98)).toBe(3)
    expect(tail(0xf0, 0x9f, 0x98, 0x80)).toBe(0)
    expect(tail(0x80)).toBe(0)
    expect(tail(0x80, 0x80, 0x80)).toBe(0)
  })
})
