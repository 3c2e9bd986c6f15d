import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { makeByteHeadTail, makeByteOutputLog } from "../src/OutputLog.js"
import { makeRedactor, REDACTED } from "../src/Redact.js"

const utf8 = (text: string) => new TextEncoder().encode(text)
const ENV = { DEPLOY_TOKEN: "zq-Deploy-7f3a9c2e1b", DB_PASSWORD: "-----BEGIN KEY-----\nline two of it\n-----END KEY-----" }
const redact = makeRedactor(ENV)

/** What the log gets of `batches`, pushed one by one and flushed, as one buffer. */
const logged = (batches: ReadonlyArray<Uint8Array>) => {
  const log = makeByteOutputLog(redact, redact.anchors!)
  const pieces = [...batches.flatMap((batch) => log.push(batch)), ...log.flush()]
  const parts = pieces.map((piece) => typeof piece === "string" ? utf8(piece) : piece)
  const joined = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  parts.reduce((at, part) => (joined.set(part, at), at + part.length), 0)
  return joined
}

/** `bytes` cut at `cuts` (offsets, any order). */
const cut = (bytes: Uint8Array, cuts: ReadonlyArray<number>) => {
  const points = [...new Set([0, ...cuts.map((c) => Math.min(c, bytes.length)), bytes.length])].sort((a, b) => a - b)
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end))
}

const SECRETS = [
  "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv",
  "ghp_abcdefghijklmnopqrstuvwxyz012345",
  "github_pat_11ABCDEFG0123456789abcdef",
  "glpat-abcdefghij0123456789",
  "xoxb-1234567890-abcdefghij",
  "AKIAIOSFODNN7EXAMPLE",
  "AIzaSyA1234567890abcdefghijklmnopqrstuv",
  "Bearer abcdefghijklmnop1234",
  "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabcdefgh\n-----END RSA PRIVATE KEY-----",
  ENV.DEPLOY_TOKEN,
  ENV.DB_PASSWORD
]

describe("the iteration log in bytes", () => {
  it("redacts every kind of secret wherever a batch boundary cuts it", () => {
    for (const secret of SECRETS) {
      const text = `before ünïcode ${secret} after\nnext line\n`
      const expected = utf8(redact(text))
      expect(new TextDecoder().decode(expected)).not.toContain(secret)
      const bytes = utf8(text)
      for (let at = 1; at < bytes.length; at++) {
        expect(logged(cut(bytes, [at]))).toEqual(expected)
      }
    }
  })

  it("writes bytes holding no secret exactly as they came, invalid UTF-8 included", () => {
    const bytes = new Uint8Array([0x68, 0xff, 0xfe, 0x0a, 0xe2, 0x82, 0x61, 0x0a, 0x6b, 0x2d, 0x73, 0x6b, 0x2d])
    for (let at = 1; at < bytes.length; at++) expect(logged(cut(bytes, [at, at + 3]))).toEqual(bytes)
  })

  it("writes a line once it has ended, and holds back only the line in progress", () => {
    const log = makeByteOutputLog(redact, redact.anchors!)
    const out = log.push(utf8("first line\nsecond, not ended"))
    expect(new TextDecoder().decode(out[0] as Uint8Array)).toBe("first line\n")
    expect(out).toHaveLength(1)
    const rest = log.flush()
    expect(rest.map((piece) => typeof piece === "string" ? piece : new TextDecoder().decode(piece)).join("")).toBe("second, not ended")
  })

  it("redacts a secret at the very end of the output, with no newline after it", () => {
    expect(new TextDecoder().decode(logged([utf8("done\nthe key: "), utf8(SECRETS[1]!)]))).toBe(`done\nthe key: ${REDACTED}`)
  })

  it("gives what redacting the whole text gives, however the bytes are batched", () => {
    const line = fc.oneof(
      fc.constantFrom(...SECRETS),
      fc.constantFrom("plain words", "gh is not a token", "sk- too short", "xoxo-kisses", "Basic usage:", "KEY----- alone", "ésprit — ☃", ""),
      fc.string({ maxLength: 40 })
    )
    fc.assert(
      fc.property(
        fc.array(fc.array(line, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(" ")), { maxLength: 12 }),
        fc.boolean(),
        fc.array(fc.nat(2000), { maxLength: 8 }),
        (lines, endsWithNewline, cuts) => {
          const text = lines.join("\n") + (endsWithNewline ? "\n" : "")
          expect(logged(cut(utf8(text), cuts))).toEqual(utf8(redact(text)))
        }
      ),
      // A twentieth as many under mutation testing (`pnpm mutate`), where every mutant runs it again.
      { numRuns: process.env.STRYKER_MUTATOR_WORKER === undefined ? 1500 : 75 }
    )
  })

  it("redacts a secret on a line far longer than a batch", () => {
    const long = "x".repeat(3 * 1024 * 1024)
    const bytes = utf8(`${long} ${SECRETS[0]} ${long}\n`)
    const cuts = [1024 * 1024, 2 * 1024 * 1024, 3 * 1024 * 1024 + 5, 4 * 1024 * 1024]
    const out = new TextDecoder().decode(logged(cut(bytes, cuts)))
    expect(out).toBe(`${long} ${REDACTED} ${long}\n`)
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
