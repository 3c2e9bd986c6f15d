import { Command, CommandExecutor } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { currentGracePeriod, stopProcessGroup } from "../src/harness/HarnessProcess.js"

/** Whether `pid` runs: a process killed but not yet reaped (a zombie) does not. */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

/**
 * A launcher (`sh`, which exits at once on SIGTERM) and the process it started, which does
 * `onTerm` when told to stop, as an agent's own process behind a wrapper does (Copilot CLI's).
 */
const launched = (dir: string, onTerm: string) =>
  Effect.gen(function*() {
    const executor = yield* CommandExecutor.CommandExecutor
    const script = `(trap '${onTerm}' TERM; echo $(exec sh -c 'echo $PPID') > ${dir}/pid; sleep 300 & wait) & exec sleep 300`
    const proc = yield* executor.start(Command.make("sh", "-c", script))
    while (!existsSync(join(dir, "pid"))) yield* Effect.sleep(Duration.millis(20))
    return { proc, child: Number(readFileSync(join(dir, "pid"), "utf8")) }
  })

describe("stopping an agent's process group", () => {
  it.live("gives the whole group the grace period: a process that outlives its launcher finishes what it does as it stops", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "spool-group-"))
      const { child, proc } = yield* launched(dir, `sleep 0.3; echo written > ${dir}/report; exit 0`)
      yield* stopProcessGroup(proc)
      assert.strictEqual(readFileSync(join(dir, "report"), "utf8"), "written\n")
      assert.isFalse(alive(child))
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)))

  it.live("kills what is left of the group once the grace period is over", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "spool-group-"))
      // A process that ignores SIGTERM.
      const { child, proc } = yield* launched(dir, "")
      yield* stopProcessGroup(proc).pipe(Effect.locally(currentGracePeriod, Effect.sleep(Duration.millis(300))))
      assert.isFalse(alive(child))
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)))
})
