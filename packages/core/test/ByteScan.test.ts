import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { makePairScanner, makeQuoteScanner, nativeScan } from "../src/bytes/ByteScan.js"

type Buckets = ReadonlyArray<ReadonlyArray<readonly [number, number]>>

/** Every position a scanner reports, in order. */
const allFound = (buckets: Buckets, bytes: Uint8Array, native: boolean) => {
  const scanner = makePairScanner(buckets, { native })
  scanner.load(bytes)
  const found: Array<number> = []
  for (let at = scanner.find(0); at !== -1; at = scanner.find(at + 1)) found.push(at)
  return found
}

/** What the nibble rule says, written out: a bucket matches when each nibble of both bytes is one of its pairs'. */
const expected = (buckets: Buckets, bytes: Uint8Array) => {
  const sets = buckets.map((pairs) => [0, 1].map((k) => [new Set(pairs.map((p) => p[k]! & 15)), new Set(pairs.map((p) => p[k]! >> 4))]))
  const found: Array<number> = []
  for (let i = 0; i + 1 < bytes.length; i++) {
    const [x, y] = [bytes[i]!, bytes[i + 1]!]
    if (sets.some(([a, b]) => a![0]!.has(x & 15) && a![1]!.has(x >> 4) && b![0]!.has(y & 15) && b![1]!.has(y >> 4))) found.push(i)
  }
  return found
}

const pair = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
const buckets = fc.array(fc.array(pair, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 })

describe("byte scans", () => {
  it("runs the SIMD module here (Node has WebAssembly SIMD)", () => {
    expect(nativeScan).toBe(true)
  })

  it("finds exactly the positions the nibble rule gives, natively and in the loop, wherever they are", () => {
    fc.assert(
      fc.property(buckets, fc.uint8Array({ maxLength: 700 }), fc.array(fc.nat(700), { maxLength: 6 }), (b, random, plant) => {
        // Plant some pairs of the buckets, so that there is something to find.
        const bytes = random.slice()
        plant.forEach((at, k) => {
          const [x, y] = b[k % b.length]![0]!
          if (at + 1 < bytes.length) bytes.set([x, y], at)
        })
        const want = expected(b, bytes)
        expect(allFound(b, bytes, true)).toEqual(want)
        expect(allFound(b, bytes, false)).toEqual(want)
      }),
      { numRuns: 400 }
    )
  })

  it("searches a batch whole after a longer one was loaded, and never past its end", () => {
    const scanner = makePairScanner([[[0x6b, 0x2d]]])
    scanner.load(new Uint8Array(300_000).fill(0x6b))
    scanner.load(new TextEncoder().encode("ok-k"))
    expect([scanner.find(0), scanner.find(2), scanner.find(3)]).toEqual([1, -1, -1])
  })

  it("embeds the module its source assembles to", () => {
    const script = join(__dirname, "..", "scripts", "wasm.mjs")
    expect(execFileSync(process.execPath, [script, "--check"], { encoding: "utf8" })).toContain("matches")
  })

  it("finds the quotes that may end a JSON string, natively and in the loop, the bytes before a batch included", () => {
    const bytes = fc.uint8Array({ maxLength: 300 }).map((b) => b.map((x) => [0x22, 0x5c, 0x61, 0x5c, 0x22][x % 5]!))
    fc.assert(
      fc.property(bytes, fc.uint8Array({ maxLength: 2 }).map((b) => b.map((x) => (x % 2 === 0 ? 0x5c : 0x61))), (batch, before) => {
        const all = [...before, ...batch]
        const want = [...batch].flatMap((byte, i) => {
          const k = i + before.length
          return byte === 0x22 && (all[k - 1] !== 0x5c || all[k - 2] === 0x5c) ? [i] : []
        })
        for (const native of [true, false]) {
          const scanner = makeQuoteScanner({ native })
          scanner.load(batch, before)
          const found: Array<number> = []
          for (let at = scanner.find(0); at !== -1; at = scanner.find(at + 1)) found.push(at)
          expect(found).toEqual(want)
        }
      }),
      { numRuns: 500 }
    )
  })
})
