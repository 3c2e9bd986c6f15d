import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream, TestClock } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as AgentHarness from "../src/harness/AgentHarness.js"
import { ChangeId } from "../src/domain/Domain.js"
import { HarnessEvent, HarnessService } from "../src/harness/HarnessService.js"

describe("an agent described as data", () => {
  it.effect("reads the agent's output against the loop's clock", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      const layer = AgentHarness.layer({
        program: { harness: "sh", program: "sh", envVar: "SPOOL_SH_BIN", binary: "/bin/sh", pathEnv: process.env.PATH, install: "install sh" },
        reports: { cost: false, tokens: false },
        args: () => ["-c", "cat >/dev/null; echo hi"],
        output: (_request, now) => ({
          feed: (event) => {
            seen.push(now())
            return [event]
          }
        })
      })
      yield* TestClock.setTime(Date.UTC(2026, 10, 1, 15, 0))
      yield* HarnessService.pipe(
        Effect.flatMap((harness) => Stream.runDrain(harness.run({ prompt: "go", changeId: ChangeId.make("001-01_a"), iteration: 1, cwd: "/tmp" }))),
        Effect.provide(layer),
        Effect.provide(NodeContext.layer)
      )
      assert.isAbove(seen.length, 0)
      assert.deepStrictEqual(new Set(seen), new Set([Date.UTC(2026, 10, 1, 15, 0)]))
    }))

  // An agent that says it met a limit and then retries for minutes (here: sleeps), as Qwen Code does on a 429.
  const retrying = (endsOnLimit: boolean, dir: string, then = "exec sleep 300") =>
    AgentHarness.layer({
      program: { harness: "sh", program: "sh", envVar: "SPOOL_SH_BIN", binary: "/bin/sh", pathEnv: process.env.PATH, install: "install sh" },
      reports: { cost: false, tokens: false },
      args: () => ["-c", `cat >/dev/null; echo $$ > ${dir}/pid; echo limited; ${then}`],
      output: () => ({
        feed: (event) =>
          event._tag === "Output" && new TextDecoder().decode(event.bytes).includes("limited")
            ? [event, HarnessEvent.Limited({ message: "429 rate limited", resetAt: null, retryAfterMs: 60_000, resets: true })]
            : [event]
      }),
      endsOnLimit
    })

  const run = (layer: ReturnType<typeof retrying>) =>
    HarnessService.pipe(
      Effect.flatMap((harness) => Stream.runCollect(harness.run({ prompt: "go", changeId: ChangeId.make("001-01_a"), iteration: 1, cwd: "/tmp" }))),
      Effect.map((chunk) => Array.from(chunk).map((event) => event._tag)),
      Effect.provide(layer),
      Effect.provide(NodeContext.layer)
    )

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }

  it.live("ends an agent's run at its first Limited when the agent retries limits by itself, and stops the agent", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "spool-limit-"))
      const tags = yield* run(retrying(true, dir))
      assert.deepStrictEqual(tags, ["Output", "Limited"])
      assert.isFalse(alive(Number(readFileSync(join(dir, "pid"), "utf8"))))
    }))

  it.live("leaves an agent's run to its own end otherwise", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "spool-limit-"))
      // The agent goes on after the limit, writes once more and exits: all of it is read.
      const tags = yield* run(retrying(false, dir, "echo done"))
      // (Both lines may come in one read: how many Output events there are is the machine's.)
      assert.include(tags, "Limited")
      assert.strictEqual(tags.at(-1), "Exited")
    }))
})
