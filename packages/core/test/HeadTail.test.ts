import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { makeByteHeadTail } from "../src/output/HeadTail.js"

// Under mutation testing (`pnpm mutate`) the properties run from one fixed seed: a mutant's result
// then depends on the code and the tests alone, as a run that keeps earlier results assumes.
if (process.env.STRYKER_MUTATOR_WORKER !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: 25 })

const utf8 = (text: string) => new TextEncoder().encode(text)

describe("the head and tail of a stream", () => {
  it("says where the full output is only when it is somewhere", () => {
    const kept = makeByteHeadTail(3)
    kept.append(utf8("abcdefghij"))
    expect(kept.text(null)).toBe("abc\n[... 4 bytes cut here ...]\nhij")
    expect(kept.text("out.log")).toBe("abc\n[... 4 bytes cut here; the full output is in out.log ...]\nhij")
  })

  it("keeps the first and last bytes of a stream for the journal, however it was batched", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 12 }), fc.integer({ min: 1, max: 30 }), (batches, half) => {
        const all = Uint8Array.from(batches.flatMap((b) => [...b]))
        const kept = makeByteHeadTail(half)
        for (const batch of batches) kept.append(batch)
        // The batches may be reused once appended.
        for (const batch of batches) batch.fill(0)
        const head = all.subarray(0, half)
        const tail = all.subarray(Math.max(head.length, all.length - half))
        const cut = all.length - head.length - tail.length
        const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
        expect(kept.text("LOG")).toBe(
          cut === 0 ? decode(all) : `${decode(head)}\n[... ${cut} bytes cut here; the full output is in LOG ...]\n${decode(tail)}`
        )
      })
    )
  })
})
