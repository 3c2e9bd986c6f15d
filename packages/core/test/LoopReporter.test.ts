import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as ByteBatches from "../src/bytes/ByteBatches.js"
import { runHarness } from "../src/harness/AgentRun.js"
import { makeCapture } from "../src/harness/Capture.js"
import { HarnessEvent, type HarnessService } from "../src/harness/HarnessService.js"
import { keep, type LentBytes, type LoopReporter } from "../src/output/LoopReporter.js"
import { makeRedactor } from "../src/output/Redact.js"
import type { IterationLog } from "../src/state/HistoryStore.js"

const utf8 = (text: string) => new TextEncoder().encode(text)
const decode = (parts: ReadonlyArray<Uint8Array>) => parts.map((part) => new TextDecoder().decode(part)).join("")

/** Output in pooled batches, as the process executor hands it on: windows of one taken buffer. */
const pooledBatches = (lines: ReadonlyArray<string>) => {
  const buffer = ByteBatches.take()
  let at = 0
  const batches = lines.map((line) => {
    const bytes = utf8(line)
    buffer.set(bytes, at)
    at += bytes.length
    return ByteBatches.share(buffer.subarray(at - bytes.length, at))
  })
  ByteBatches.seal(buffer)
  return { buffer, batches }
}

/** Runs the batches through `runHarness` with the live view on, to `reporter`, logging to nowhere. */
const show = (batches: ReadonlyArray<Uint8Array>, reporter: LoopReporter["Type"]) => {
  const log: IterationLog = { path: "memory", write: () => Effect.void }
  const harness: HarnessService["Type"] = {
    name: "test",
    reports: { cost: false, tokens: false },
    preflight: Effect.void,
    run: () =>
      Stream.fromIterable([
        ...batches.map((bytes) => HarnessEvent.Output({ stream: "stdout", bytes, plain: true })),
        HarnessEvent.Exited({ exitCode: 0, signal: null })
      ]).pipe(Stream.rechunk(1))
  }
  return runHarness({
    harness,
    request: { prompt: "", changeId: "c" as never, iteration: 1, cwd: "/tmp" },
    capture: makeCapture("COMPLETE", ""),
    log,
    reporter,
    stream: true,
    inactivityTimeoutMs: 60_000,
    redact: makeRedactor({})
  })
}

describe("output lent to a reporter", () => {
  it.effect("is overwritten once the pool reuses its batch; a keep copy is not", () =>
    Effect.gen(function*() {
      const lines = ["first line of the agent\n", "second line\n"]
      const { batches, buffer } = pooledBatches(lines)
      // The mistake the type warns of: holding on to the lent bytes themselves.
      const held: Array<LentBytes> = []
      const kept: Array<Uint8Array> = []
      yield* show(batches, {
        write: (output) =>
          Effect.sync(() => {
            if (typeof output === "string") return
            held.push(output)
            kept.push(keep(output))
          }),
        line: () => Effect.void,
        warn: () => Effect.void
      })
      assert.strictEqual(decode(held), lines.join(""))
      // Every batch was given back once written: the pool hands the buffer out again, and the next output fills it.
      const reused = ByteBatches.take()
      assert.strictEqual(reused.buffer, buffer.buffer)
      reused.fill(0x21)
      ByteBatches.seal(reused)
      assert.notStrictEqual(decode(held), lines.join(""))
      assert.match(decode(held), /^!+$/)
      assert.strictEqual(decode(kept), lines.join(""))
    }))
})
