import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { compactJsonLine, makeLineCompactor } from "../src/bytes/JsonCompact.js"
import { type BufferedLine, makeLineBuffer } from "../src/bytes/LineBuffer.js"

const utf8 = (text: string) => new TextEncoder().encode(text)

/** `bytes` cut at `cuts` (fractions of its length). */
const cut = (bytes: Uint8Array, cuts: ReadonlyArray<number>) => {
  const points = [0, ...cuts.map((c) => Math.floor(c * bytes.length)).sort((a, b) => a - b), bytes.length]
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end))
}

/** Strings that are hard to cut: escaped quotes and backslashes (`\\"` too), `\u` escapes, non-ASCII. */
const nasty = fc.array(fc.constantFrom("a", "\"", "\\", "\\\"", "é", "☃", "𝄞", "\n", "\u0001", "x".repeat(50)), { maxLength: 60 }).map((parts) => parts.join(""))
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small" }, nasty, fc.integer(), fc.boolean(), fc.array(tie("node"), { maxLength: 3 }), fc.dictionary(nasty, tie("node"), { maxKeys: 3 }))
})).node

describe("compacting a long JSON line as it comes", () => {
  it("keeps what compacting the whole line keeps, however the line is cut into pieces", () => {
    fc.assert(
      fc.property(value, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), fc.integer({ min: 1, max: 40 }), (v, cuts, keep) => {
        const bytes = utf8(JSON.stringify({ type: "tool_use", value: v }))
        const compactor = makeLineCompactor(keep)
        // The pieces are reused once pushed, as batches are.
        for (const piece of cut(bytes, cuts)) {
          compactor.push(piece)
          piece.fill(0x7b)
        }
        expect(compactor.finish()).toBe(compactJsonLine(utf8(JSON.stringify({ type: "tool_use", value: v })), keep))
      }),
      { numRuns: 1000 }
    )
  })

  it("reads the small fields of a line with a 4 MiB string while keeping a few KiB of it", () => {
    const output = "line \"quoted\" and \\\\ back\\slashed — ünïcödé\n".repeat(90_000)
    const line = utf8(`${JSON.stringify({ type: "tool_use", part: { tool: "bash", state: { status: "completed", output, title: "npm test" } } })}\n`)
    const buffer = makeLineBuffer(8 * 1024 * 1024, 64 * 1024, { wholeIf: (head) => head.includes("\"type\":\"text\"") })
    const lines: Array<BufferedLine> = []
    for (const piece of cut(line, [0.1, 0.2, 0.5, 0.51, 0.9])) lines.push(...buffer.push(piece))
    expect(lines).toHaveLength(1)
    const first = lines[0]!
    if (first._tag !== "Compact") throw new Error(`expected a compact line, got ${first._tag}`)
    expect(first.length).toBe(line.length - 1)
    expect(first.text.length).toBeLessThan(2048)
    const event = JSON.parse(first.text)
    expect(event.part.state.title).toBe("npm test")
    expect(output.startsWith(event.part.state.output)).toBe(true)
  })

  it("keeps a long line whole when its start says it may be the agent's text, and reads it exactly", () => {
    const text = "é".repeat(100_000)
    const line = utf8(`${JSON.stringify({ type: "text", part: { text } })}\n`)
    const buffer = makeLineBuffer(8 * 1024 * 1024, 64 * 1024, { wholeIf: (head) => head.includes("\"type\":\"text\"") })
    const lines = cut(line, [0.3, 0.6]).flatMap((piece) => buffer.push(piece))
    const first = lines[0]!
    if (first._tag !== "Long") throw new Error(`expected a whole line, got ${first._tag}`)
    expect(JSON.parse(new TextDecoder().decode(first.bytes)).part.text).toBe(text)
  })

  it("still says a compacted line too long when what it keeps outgrows the limit", () => {
    const line = utf8(`[${Array.from({ length: 20_000 }, (_, i) => i).join(",")}]\n`)
    const buffer = makeLineBuffer(50_000, 1000, { wholeIf: () => false })
    expect(buffer.push(line)).toEqual([{ _tag: "TooLong", length: line.length - 1 }])
  })
})
