import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as ByteBatches from "../src/bytes/ByteBatches.js"
import { makeCapture } from "../src/harness/Capture.js"
import { runHarness } from "../src/harness/AgentRun.js"
import { HarnessEvent, type HarnessService } from "../src/harness/HarnessService.js"
import type { IterationLog } from "../src/state/HistoryStore.js"
import { makeRedactor, REDACTED } from "../src/output/Redact.js"

const SECRET = "sk-ant-0123456789abcdefghijklmnop"
const utf8 = (text: string) => new TextEncoder().encode(text)
const stdout = (bytes: Uint8Array, plain = true) => HarnessEvent.Output({ stream: "stdout", bytes, plain })

/** One agent run of `events` (in chunks of `per`) through `runHarness`; returns the log's bytes and the capture. */
const runAgent = (events: ReadonlyArray<HarnessEvent>, per = 1, writeDelay = 0) =>
  Effect.gen(function*() {
    const written: Array<Uint8Array> = []
    const log: IterationLog = {
      path: "memory",
      // A write takes the bytes when it is done, as a real one does.
      write: (data) =>
        Effect.zipRight(
          writeDelay === 0 ? Effect.void : Effect.promise(() => new Promise((resolve) => setTimeout(resolve, writeDelay))),
          Effect.sync(() => void written.push(typeof data === "string" ? utf8(data) : data.slice()))
        )
    }
    const harness: HarnessService["Type"] = {
      name: "test",
      reports: { cost: false, tokens: false },
      preflight: Effect.void,
      run: () => Stream.fromIterable(events).pipe(Stream.rechunk(per))
    }
    const capture = makeCapture("COMPLETE", "")
    yield* runHarness({
      harness,
      request: { prompt: "", changeId: "c" as never, iteration: 1, cwd: "/tmp" },
      capture,
      log,
      reporter: { write: () => Effect.void, line: () => Effect.void, warn: () => Effect.void },
      stream: false,
      inactivityTimeoutMs: 60_000,
      redact: makeRedactor({})
    })
    const bytes = new Uint8Array(written.reduce((n, part) => n + part.length, 0))
    written.reduce((at, part) => (bytes.set(part, at), at + part.length), 0)
    return { bytes, text: new TextDecoder().decode(bytes), capture }
  })

const exited = HarnessEvent.Exited({ exitCode: 0, signal: null })

describe("runHarness", () => {
  it.effect("redacts a secret on the agent's last line, which ends without a newline", () =>
    Effect.gen(function*() {
      const { text } = yield* runAgent([stdout(utf8("working\n")), stdout(utf8(`the key is ${SECRET}`)), exited])
      assert.strictEqual(text, `working\nthe key is ${REDACTED}`)
    }))

  it.effect("redacts a secret split across two batches, and one on stderr", () =>
    Effect.gen(function*() {
      const { text } = yield* runAgent([
        stdout(utf8(`a ${SECRET.slice(0, 10)}`)),
        stdout(utf8(`${SECRET.slice(10)} b\nnext\n`)),
        HarnessEvent.Output({ stream: "stderr", bytes: utf8(`oops ${SECRET}\n`), plain: true }),
        exited
      ], 2)
      assert.strictEqual(text, `a ${REDACTED} b\nnext\n[stderr] oops ${REDACTED}\n`)
    }))

  it.effect("logs output holding no secret as the very bytes that came, a character split across batches included", () =>
    Effect.gen(function*() {
      const whole = utf8("héllo wörld\nno secrets — here\n<promise>COMPLETE</promise>\n")
      const events = [3, 9, 20, 33].reduce(
        (acc, cut, i, cuts) => [...acc, stdout(whole.subarray(cut, cuts[i + 1] ?? whole.length))],
        [stdout(whole.subarray(0, 3))]
      )
      const { bytes, capture } = yield* runAgent([...events, exited], 3)
      assert.deepStrictEqual(bytes, whole)
      assert.isTrue(capture.judge.judgement().claimed)
    }))

  it.effect("cuts a line longer than 64 KiB into pieces it still redacts", () =>
    Effect.gen(function*() {
      const long = "x ".repeat(40_000)
      const { text } = yield* runAgent([stdout(utf8(long)), stdout(utf8(`${long}${SECRET} end`)), exited])
      assert.notInclude(text, SECRET)
      assert.strictEqual(text.length, long.length * 2 + `${REDACTED} end`.length)
    }))

  it.effect("gives pooled batches back after writing them, and keeps no reference to their bytes", () =>
    Effect.gen(function*() {
      const lines = ["first line\n", `a ${SECRET} here\nand a line in pro`, "gress\nlast line without end"]
      // Two batches share one buffer; the third has one of its own.
      const [first, second] = [ByteBatches.take(), ByteBatches.take()]
      const bytes = lines.map(utf8)
      first.set(bytes[0]!)
      first.set(bytes[1]!, bytes[0]!.length)
      second.set(bytes[2]!)
      const batches = [
        ByteBatches.share(first.subarray(0, bytes[0]!.length)),
        ByteBatches.share(first.subarray(bytes[0]!.length, bytes[0]!.length + bytes[1]!.length)),
        ByteBatches.share(second.subarray(0, bytes[2]!.length))
      ]
      ByteBatches.seal(first)
      ByteBatches.seal(second)
      const { text, capture } = yield* runAgent([...batches.map((bytes) => stdout(bytes)), exited], 1, 5)
      assert.strictEqual(text, `first line\na ${REDACTED} here\nand a line in progress\nlast line without end`)
      // Given back: the pool hands the same buffers out again, and what is written into them now changes nothing kept.
      const reused = [ByteBatches.take(), ByteBatches.take()]
      assert.sameMembers(reused.map((b) => b.buffer), [first.buffer, second.buffer])
      for (const buffer of reused) buffer.fill(0x21)
      assert.strictEqual(capture.stdout.text("the log"), `first line\na ${SECRET} here\nand a line in progress\nlast line without end`)
      reused.forEach(ByteBatches.seal)
    }))
})