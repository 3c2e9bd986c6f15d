import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream, TestClock } from "effect"
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as AgentHarness from "../src/harness/AgentHarness.js"
import { ChangeId } from "../src/domain/Domain.js"
import { type HarnessError, HarnessEvent, HarnessService } from "../src/harness/HarnessService.js"

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

  // An agent that writes a report of its run to the file its arguments name, as Copilot CLI writes its usage.
  const reporting = (dir: string, script: string, reports: Array<string | null>, files: Array<string>) =>
    AgentHarness.layer({
      program: { harness: "sh", program: "sh", envVar: "SPOOL_SH_BIN", binary: "/bin/sh", pathEnv: process.env.PATH, install: "install sh" },
      reports: { cost: false, tokens: true },
      args: () => ["-c", `cat >/dev/null; echo hi; ${script}`, "sh"],
      report: {
        dir,
        args: (file) => {
          files.push(file)
          return [file]
        }
      },
      output: () => ({
        feed: (event) => [event],
        report: (text) => {
          reports.push(text)
          return [HarnessEvent.Warning({ message: `report: ${text}` })]
        }
      })
    })

  it.live("hands the agent a report file of its own for each run and reads it once the agent exited, before Exited", () =>
    Effect.gen(function*() {
      const dir = join(mkdtempSync(join(tmpdir(), "spool-report-")), "state")
      const reports: Array<string | null> = []
      const files: Array<string> = []
      const tags = yield* run(reporting(dir, `printf '{"tokens":3}' > "$1"`, reports, files))
      assert.deepStrictEqual(tags.slice(-2), ["Warning", "Exited"])
      assert.deepStrictEqual(reports, ['{"tokens":3}'])
      assert.strictEqual(files.length, 1)
      assert.isTrue(files[0]!.startsWith(`${dir}/spool-run-`))
      // The run's private directory is gone with the run; the directory it was made in stays.
      assert.isFalse(existsSync(files[0]!))
      assert.deepStrictEqual(readdirSync(dir), [])
      yield* run(reporting(dir, `printf '{"tokens":4}' > "$1"`, reports, files))
      assert.notStrictEqual(files[1], files[0])
      assert.deepStrictEqual(reports, ['{"tokens":3}', '{"tokens":4}'])
    }))

  it.live("reads no report when the agent wrote none", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "spool-report-"))
      const reports: Array<string | null> = []
      const tags = yield* run(reporting(dir, "exit 1", reports, []))
      assert.deepStrictEqual(reports, [null])
      assert.deepStrictEqual(tags.slice(-2), ["Warning", "Exited"])
    }))

  it.live("fails the run, naming the place, when the report's directory cannot be made, and starts no agent", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "spool-report-"))
      writeFileSync(join(root, "file"), "")
      const dir = join(root, "file", "state")
      const files: Array<string> = []
      const failure = yield* Effect.flip(run(reporting(dir, `echo started > ${root}/started`, [], files)))
      assert.strictEqual(failure._tag, "HarnessError")
      assert.strictEqual((failure as HarnessError).reason, "Io")
      assert.include(failure.message, `its report cannot be kept in ${dir}`)
      assert.deepStrictEqual(files, [])
      assert.isFalse(existsSync(join(root, "started")))
    }))

  // An agent that says it met a limit, retries by itself, and writes the limit's wait to its log only
  // as it is stopped, as Copilot CLI logs a 429's retry-after and prints it nowhere.
  const logging = (dir: string, script: string, logs: Array<string | null>, dirs: Array<string>) =>
    AgentHarness.layer({
      program: { harness: "sh", program: "sh", envVar: "SPOOL_SH_BIN", binary: "/bin/sh", pathEnv: process.env.PATH, install: "install sh" },
      reports: { cost: false, tokens: false },
      args: () => ["-c", `cat >/dev/null; touch "$1/.lock"; ${script}; echo limited; sleep 300 & wait`, "sh"],
      log: {
        dir,
        args: (path) => {
          dirs.push(path)
          return [path]
        }
      },
      output: () => ({
        feed: (event) =>
          event._tag === "Output" && new TextDecoder().decode(event.bytes).includes("limited")
            ? [event, HarnessEvent.Limited({ message: "429 rate limited", resetAt: null, retryAfterMs: null, resets: true })]
            : [event],
        limit: (limited, log) => {
          logs.push(log)
          const wait = /retry_after_ms=(\d+)/.exec(log ?? "")?.[1]
          return wait === undefined ? limited : HarnessEvent.Limited({ ...limited, retryAfterMs: Number(wait) })
        }
      }),
      endsOnLimit: true
    })

  const events = (layer: ReturnType<typeof retrying>) =>
    HarnessService.pipe(
      Effect.flatMap((harness) => Stream.runCollect(harness.run({ prompt: "go", changeId: ChangeId.make("001-01_a"), iteration: 1, cwd: "/tmp" }))),
      Effect.map((chunk) => Array.from(chunk)),
      Effect.provide(layer),
      Effect.provide(NodeContext.layer)
    )

  it.live("completes the limit that ends a run from the agent's log, read once the agent has stopped, and keeps the log", () =>
    Effect.gen(function*() {
      const dir = join(mkdtempSync(join(tmpdir(), "spool-log-")), "logs")
      const logs: Array<string | null> = []
      const dirs: Array<string> = []
      const script = `trap 'echo retry_after_ms=3600000 > "$1/agent.log"; exit 0' TERM`
      const seen = yield* events(logging(dir, script, logs, dirs))
      assert.deepStrictEqual(seen.map((event) => event._tag), ["Output", "Limited"])
      assert.deepInclude(seen.at(-1), { message: "429 rate limited", retryAfterMs: 3_600_000 })
      // Written as the agent was stopped: read after it; the lock beside it left out.
      assert.deepStrictEqual(logs, ["retry_after_ms=3600000\n"])
      // Each run logs in a directory of its own under `dir`, kept after the run as the agent's logs are.
      assert.strictEqual(dirs.length, 1)
      assert.isTrue(dirs[0]!.startsWith(`${dir}/spool-run-`))
      assert.deepStrictEqual(readdirSync(dirs[0]!).sort(), [".lock", "agent.log"])
      yield* events(logging(dir, script, logs, dirs))
      assert.notStrictEqual(dirs[1], dirs[0])
      assert.strictEqual(readdirSync(dir).length, 2)
    }))

  it.live("hands the limit on as read when the agent logged nothing", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "spool-log-"))
      const logs: Array<string | null> = []
      const seen = yield* events(logging(dir, "true", logs, []))
      assert.deepStrictEqual(logs, [null])
      assert.deepInclude(seen.at(-1), { _tag: "Limited", retryAfterMs: null })
    }))

  it.live("fails the run, naming the place, when the log's directory cannot be made, and starts no agent", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "spool-log-"))
      writeFileSync(join(root, "file"), "")
      const dir = join(root, "file", "logs")
      const dirs: Array<string> = []
      const failure = yield* Effect.flip(events(logging(dir, `echo started > ${root}/started`, [], dirs)))
      assert.strictEqual((failure as HarnessError).reason, "Io")
      assert.include(failure.message, `its log cannot be kept in ${dir}`)
      assert.deepStrictEqual(dirs, [])
      assert.isFalse(existsSync(join(root, "started")))
    }))

  it.live("reads the report an agent stopped at a limit wrote as it stopped, before the Limited", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "spool-report-"))
      const reports: Array<string | null> = []
      const layer = AgentHarness.layer({
        program: { harness: "sh", program: "sh", envVar: "SPOOL_SH_BIN", binary: "/bin/sh", pathEnv: process.env.PATH, install: "install sh" },
        reports: { cost: false, tokens: true },
        args: () => ["-c", `cat >/dev/null; trap 'printf "{\\"tokens\\":5}" > "$1"; exit 0' TERM; echo limited; sleep 300 & wait`, "sh"],
        report: { dir, args: (file) => [file] },
        output: () => ({
          feed: (event) =>
            event._tag === "Output" && new TextDecoder().decode(event.bytes).includes("limited")
              ? [event, HarnessEvent.Limited({ message: "429 rate limited", resetAt: null, retryAfterMs: null, resets: true })]
              : [event],
          report: (text) => {
            reports.push(text)
            return [HarnessEvent.Warning({ message: `report: ${text}` })]
          }
        }),
        endsOnLimit: true
      })
      const seen = yield* events(layer)
      assert.deepStrictEqual(seen.map((event) => event._tag), ["Output", "Warning", "Limited"])
      assert.deepStrictEqual(reports, ['{"tokens":5}'])
      // The run's private directory is gone with the run.
      assert.deepStrictEqual(readdirSync(dir), [])
    }))
})
