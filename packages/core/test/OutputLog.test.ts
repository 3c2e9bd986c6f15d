import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { makeByteOutputLog } from "../src/output/ByteOutputLog.js"
import { makeOutputLog, MAX_REDACTED_LINE } from "../src/output/OutputLog.js"
import { ANCHOR_LEAD, ANCHOR_REACH, makeRedactor, REDACTED } from "../src/output/Redact.js"

// Under mutation testing (`pnpm mutate`) the properties run from one fixed seed: a mutant's result
// then depends on the code and the tests alone, as a run that keeps earlier results assumes.
if (process.env.STRYKER_MUTATOR_WORKER !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: 25 })

const utf8 = (text: string) => new TextEncoder().encode(text)
const ENV = { DEPLOY_TOKEN: "zq-Deploy-7f3a9c2e1b", DB_PASSWORD: "-----BEGIN KEY-----\nline two of it\n-----END KEY-----" }
// Made inside each test, so that what it runs is the code under test at the time.
const redactor = () => makeRedactor(ENV)
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** What the log gets of `batches`, pushed one by one and flushed, as one buffer. */
const logged = (batches: ReadonlyArray<Uint8Array>, redact = redactor()) => {
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
    const redact = redactor()
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
    const redact = redactor()
    const log = makeByteOutputLog(redact, redact.anchors!)
    const out = log.push(utf8("first line\nsecond, not ended"))
    expect(new TextDecoder().decode(out[0] as Uint8Array)).toBe("first line\n")
    expect(out).toHaveLength(1)
    expect(log.push(new Uint8Array(0))).toEqual([])
    const rest = log.flush()
    expect(rest.map((piece) => typeof piece === "string" ? piece : new TextDecoder().decode(piece)).join("")).toBe("second, not ended")
  })

  it("redacts a secret at the very end of the output, with no newline after it", () => {
    expect(new TextDecoder().decode(logged([utf8("done\nthe key: "), utf8(SECRETS[1]!)]))).toBe(`done\nthe key: ${REDACTED}`)
  })

  it("gives what redacting the whole text gives, however the bytes are batched", () => {
    const redact = redactor()
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
})

/** `pieces` as one text, each piece marked `b:` (bytes as they came) or `s:` (text written). */
const shown = (pieces: ReadonlyArray<Uint8Array | string>) =>
  pieces.map((piece) => typeof piece === "string" ? `s:${piece}` : `b:${decode(piece)}`).join("|")

/** `pieces` joined into one buffer. */
const joined = (pieces: ReadonlyArray<Uint8Array | string>) => {
  const parts = pieces.map((piece) => typeof piece === "string" ? utf8(piece) : piece)
  return Uint8Array.from(parts.flatMap((part) => [...part]))
}

describe("the iteration log in lines", () => {
  it("writes each line once it has ended, as the bytes that came when it held no secret", () => {
    const log = makeOutputLog(redactor())
    expect(log.push(utf8("partial"), "partial")).toEqual([])
    expect(log.push(new Uint8Array(0), "")).toEqual([])
    expect(shown(log.push(utf8("ly done\nsecond\nthird, not"), "ly done\nsecond\nthird, not"))).toBe("b:partial|b:ly done\nsecond\n")
    expect(shown(log.push(utf8(" ended\n"), " ended\n"))).toBe("b:third, not|b: ended\n")
    expect(log.flush()).toEqual([])
    expect(shown(log.push(utf8("last"), "last"))).toBe("")
    expect(shown(log.flush())).toBe("b:last")
  })

  it("redacts a secret split across batches, in the line that holds it", () => {
    const log = makeOutputLog(redactor())
    expect(log.push(utf8("ok\nthe token zq-Dep"), "ok\nthe token zq-Dep")).toEqual([utf8("ok\n")])
    expect(shown(log.push(utf8("loy-7f3a9c2e1b here\nmore"), "loy-7f3a9c2e1b here\nmore"))).toBe(`s:the token ${REDACTED} here\n`)
    expect(shown(log.push(utf8(" zq-Deploy-7f3a9c2e1b"), " zq-Deploy-7f3a9c2e1b"))).toBe("")
    expect(shown(log.flush())).toBe(`s:more ${REDACTED}`)
  })

  it("labels each line of a labelled stream, written as text, and only lines with something on them", () => {
    const log = makeOutputLog(redactor(), "[stderr] ")
    expect(log.push(utf8("a warning"), "a warning")).toEqual([])
    expect(shown(log.push(utf8("\n\nzq-Deploy-7f3a9c2e1b\nnext"), "\n\nzq-Deploy-7f3a9c2e1b\nnext"))).toBe(
      `s:[stderr] a warning\n\n[stderr] ${REDACTED}\n`
    )
    expect(shown(log.flush())).toBe("s:[stderr] next")
    expect(log.flush()).toEqual([])
    expect(shown(log.push(utf8("after\n"), "after\n"))).toBe("s:[stderr] after\n")
  })

  it("writes the first bytes of a character the stream never finished as they came, labelled or not", () => {
    for (const label of [null, "[stderr] "]) {
      const log = makeOutputLog(redactor(), label)
      // A stream decoder gives no text for the first byte of a two-byte character.
      expect(log.push(new Uint8Array([0xc3]), "")).toEqual([])
      expect(log.flush()).toEqual([new Uint8Array([0xc3])])
    }
  })

  it("writes a line longer than the longest redacted at once in pieces, a character cut at a piece's end kept whole", () => {
    const long = "x".repeat(MAX_REDACTED_LINE)
    const log = makeOutputLog(redactor())
    expect(log.push(utf8("x".repeat(MAX_REDACTED_LINE - 1)), "x".repeat(MAX_REDACTED_LINE - 1))).toEqual([])
    // The text reaches the longest here; the first byte of "é" came with it, its text not yet.
    const first = log.push(new Uint8Array([0x78, 0xc3]), "x")
    expect(decode(joined(first))).toBe(long)
    expect(first.every((piece) => typeof piece !== "string")).toBe(true)
    const rest = log.push(new Uint8Array([0xa9, 0x0a]), "é\n")
    expect(joined(rest)).toEqual(new Uint8Array([0xc3, 0xa9, 0x0a]))
    expect(rest.every((piece) => typeof piece !== "string")).toBe(true)
    // A piece cut where no character is: nothing is held back.
    const again = makeOutputLog(redactor())
    expect(decode(joined(again.push(utf8(long), long)))).toBe(long)
    expect(shown(again.push(utf8("y\n"), "y\n"))).toBe("b:y\n")
  })

  it("labels and redacts each piece of a long line", () => {
    const long = "x".repeat(MAX_REDACTED_LINE)
    const log = makeOutputLog(redactor(), "[stderr] ")
    expect(shown(log.push(utf8(long), long))).toBe(`s:[stderr] ${long}`)
    expect(shown(log.push(utf8("y zq-Deploy-7f3a9c2e1b\n"), "y zq-Deploy-7f3a9c2e1b\n"))).toBe(`s:[stderr] y ${REDACTED}\n`)
  })
})

describe("the byte log's regions", () => {
  it("redacts a token longer than a find reaches, on a line that ends in the same batch", () => {
    const redact = redactor()
    const text = `key: sk-ant-api03-${"a".repeat(20000)} end\nnext line\n`
    expect(redact(text)).toContain(REDACTED)
    for (const cuts of [[], [text.length - 4]]) expect(decode(logged(cut(utf8(text), cuts)))).toBe(redact(text))
  })

  it("writes a line that held a secret as soon as it has ended", () => {
    const redact = redactor()
    const log = makeByteOutputLog(redact, redact.anchors!)
    expect(decode(joined(log.push(utf8(`key ${ENV.DEPLOY_TOKEN} here\nnot ended`))))).toBe(`key ${REDACTED} here\n`)
    expect(decode(joined(log.flush()))).toBe("not ended")
  })

  it("redacts a token whose find falls in a multi-line find's reach and whose line ends past that reach, in a later batch", () => {
    const redact = redactor()
    // "Bearer" reaches ANCHOR_REACH bytes on; the token's line begins before that and ends after it.
    const head = "Bearer abcdefghijklmnop1234\n"
    const keyLine = `key sk-ant-api03-${"A".repeat(80)} end\n`
    const lineStart = ANCHOR_REACH - 51
    const text = `${head}${"x".repeat(lineStart - head.length - 1)}\n${keyLine}after\n`
    expect(redact(text)).toContain(`key ${REDACTED} end`)
    expect(decode(logged(cut(utf8(text), [ANCHOR_REACH + 10])))).toBe(redact(text))
  })

  it("writes the characters a region cuts at either end as they came", () => {
    const redact = redactor()
    // The pad moves where ANCHOR_LEAD before the anchor falls: between the two bytes of an "é", or not.
    for (const pad of ["", "x"]) {
      for (const secret of [SECRETS[0]!, SECRETS[8]!, ENV.DB_PASSWORD]) {
        const text = `${"é".repeat(300)}${pad} ${secret} ${"é".repeat(10000)}`
        const bytes = utf8(`${text}${"é".repeat(10000)}\nafter\n`)
        const expected = utf8(redact(decode(bytes)))
        for (const cuts of [[], [utf8(text).length], [utf8(text).length + 1]]) expect(logged(cut(bytes, cuts))).toEqual(expected)
      }
    }
  })
})

/** `text` as bytes, each `¤` a byte no UTF-8 text holds (0xff). */
const withRaw = (text: string) => {
  const parts = text.split("¤").map(utf8)
  return Uint8Array.from(parts.flatMap((part, i) => i === 0 ? [...part] : [0xff, ...part]))
}

/**
 * `bytes` as text, each 0xff byte shown as `¤`: one written as it came stays `¤`, one decoded with
 * the text around a secret comes out as U+FFFD.
 */
const shownRaw = (bytes: Uint8Array) => {
  const parts: Array<string> = []
  let from = 0
  for (let at = bytes.indexOf(0xff); at !== -1; at = bytes.indexOf(0xff, from)) {
    parts.push(decode(bytes.subarray(from, at)))
    from = at + 1
  }
  return [...parts, decode(bytes.subarray(from))].join("¤")
}

const FFFD = "\ufffd"

/** Every way of cutting `bytes` in two, and not cutting it. */
const everyCut = (bytes: Uint8Array) => [[], ...Array.from({ length: bytes.length - 1 }, (_, i) => [i + 1])]

describe("what the byte log decodes around a secret", () => {
  it("decodes the secret's line alone, however it is batched: the lines around it are written as they came", () => {
    const bytes = withRaw(`¤ one\n¤ key ${SECRETS[0]} ¤\n¤ two\n`)
    for (const cuts of everyCut(bytes)) {
      expect(shownRaw(logged(cut(bytes, cuts)))).toBe(`¤ one\n${FFFD} key ${REDACTED} ${FFFD}\n¤ two\n`)
    }
  })

  it("decodes the secret's whole line when it came in several batches before the secret", () => {
    const bytes = withRaw(`¤ one\n¤ a key ${SECRETS[0]}\n`)
    const expected = `¤ one\n${FFFD} a key ${REDACTED}\n`
    for (let first = 1; first < bytes.length; first++) {
      for (let second = first + 1; second < bytes.length; second++) {
        expect(shownRaw(logged(cut(bytes, [first, second])))).toBe(expected)
      }
    }
  })

  it("decodes a long line from at most ANCHOR_LEAD bytes before the secret's anchor", () => {
    // The anchor of `sk-...` is its `k-`, ANCHOR_LEAD + 1 bytes after the line's first byte.
    const bytes = withRaw(`¤¤${"y".repeat(ANCHOR_LEAD - 4)}¤ ${SECRETS[0]} end\n`)
    const expected = `¤${FFFD}${"y".repeat(ANCHOR_LEAD - 4)}${FFFD} ${REDACTED} end\n`
    for (const cuts of everyCut(bytes)) expect(shownRaw(logged(cut(bytes, cuts)))).toBe(expected)
  })

  it("decodes ANCHOR_REACH bytes on from a secret that may span lines, wherever it is in the batch", () => {
    const before = "x\n".repeat(5000)
    const bytes = withRaw(`${before}Bearer abcdefghijklmnop1234\n¤ next\n${"z".repeat(ANCHOR_REACH)}\n¤ far\n`)
    const expected = `${before}Bearer ${REDACTED}\n${FFFD} next\n${"z".repeat(ANCHOR_REACH)}\n¤ far\n`
    for (const cuts of [[], [before.length + 3], [before.length + 30], [before.length + 30, before.length + 40]]) {
      expect(shownRaw(logged(cut(bytes, cuts)))).toBe(expected)
    }
  })

  it("writes a line that only looks like it holds a secret as it came, right after a line that does", () => {
    for (const between of ["", "plain ¤\n"]) {
      const bytes = withRaw(`key ${SECRETS[0]} ¤\n${between}¤ sk- too short\nnext ¤\n`)
      const expected = `key ${REDACTED} ${FFFD}\n${between}¤ sk- too short\nnext ¤\n`
      for (const cuts of everyCut(bytes)) expect(shownRaw(logged(cut(bytes, cuts)))).toBe(expected)
    }
  })

  it("decodes no line whose find fails its anchor's check, however near a secret", () => {
    // "Y-----" ends a private key's first line only after "KE"; such a find reaches over many lines.
    const bytes = withRaw(`¤ WHY----- not a key ¤\nkey ${SECRETS[0]}\n¤ after\n`)
    const expected = `¤ WHY----- not a key ¤\nkey ${REDACTED}\n¤ after\n`
    // Not cut just before "Y-----" or inside it: a find is checked against the bytes of its batch (and
    // the last few of the batch before) only, and "KE" would be outside them.
    const anchor = decode(bytes).indexOf("Y-----")
    const whole = everyCut(bytes).filter(([at]) => at === undefined || at < anchor || at >= anchor + 6)
    for (const cuts of whole) expect(shownRaw(logged(cut(bytes, cuts)))).toBe(expected)
  })

  it("decodes two secrets' lines apart, whichever kind of secret comes first", () => {
    // An environment variable's value and a token of a known shape are looked for apart.
    const bytes = withRaw(`a ${ENV.DEPLOY_TOKEN} ¤\n¤ between ¤\n¤ b ${SECRETS[0]}\n`)
    const expected = `a ${REDACTED} ${FFFD}\n¤ between ¤\n${FFFD} b ${REDACTED}\n`
    for (const cuts of everyCut(bytes)) expect(shownRaw(logged(cut(bytes, cuts)))).toBe(expected)
  })

  it("decodes no line that only begins like a secret's anchor, however near a secret", () => {
    // "Be" begins both "Because" and "Bearer", whose secret may reach over many lines.
    const bytes = withRaw(`¤ Because it is ¤\nkey ${SECRETS[0]}\n¤ after\n`)
    const expected = `¤ Because it is ¤\nkey ${REDACTED}\n¤ after\n`
    for (const cuts of everyCut(bytes)) expect(shownRaw(logged(cut(bytes, cuts)))).toBe(expected)
  })

  it("decodes no further than the line's end for a second find on the secret's line", () => {
    const bytes = withRaw(`key ${SECRETS[0]} and sk- too short ¤\n¤ next\n`)
    const expected = `key ${REDACTED} and sk- too short ${FFFD}\n¤ next\n`
    for (const cuts of everyCut(bytes)) expect(shownRaw(logged(cut(bytes, cuts)))).toBe(expected)
  })

  it("redacts a value whose first line is a single character", () => {
    const redact = () => makeRedactor({ SIGNING_KEY: "x\nyz-signing-4f8a" })
    const bytes = utf8("done\nkey: x\nyz-signing-4f8a end\n")
    for (const cuts of everyCut(bytes)) expect(decode(logged(cut(bytes, cuts), redact()))).toBe(`done\nkey: ${REDACTED} end\n`)
  })

  it("keeps what it holds back of a batch after the batch is reused", () => {
    const redact = redactor()
    const log = makeByteOutputLog(redact, redact.anchors!)
    const batch = utf8(`done\nkey ${SECRETS[0]} and no end yet`)
    const first = decode(joined(log.push(batch)))
    batch.fill(0x21)
    expect(first + decode(joined(log.flush()))).toBe(`done\nkey ${REDACTED} and no end yet`)
  })
})
