import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream, TestClock } from "effect"
import * as AgentHarness from "../src/harness/AgentHarness.js"
import { ChangeId } from "../src/domain/Domain.js"
import { HarnessService } from "../src/harness/HarnessService.js"

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
})
