import type { CommandExecutor, FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { HarnessEvent, HarnessService } from "@spool/core"
import { Effect, Exit, type Layer } from "effect"
import * as path from "node:path"
import { tempDirectory } from "./fakeHttpServer.js"
import { sortEvents } from "./harnessEvents.js"

/*
 * What every agent's harness does alike, as one table of cases each harness package runs with its
 * own data: finding the agent's binary before a loop starts (or saying how to install it), passing
 * its raw output on, and reading the usage limits its agent reports.
 */

/** How a harness finds its agent: the data its preflight cases need. */
export interface PreflightSpec {
  /** The program looked for on PATH (`claude`). */
  readonly program: string
  /** The variable that names the binary instead (`SPOOL_CLAUDE_BIN`). */
  readonly envVar: string
  /** The command the error suggests (`npm install -g @anthropic-ai/claude-code`). */
  readonly install: string
  /** The installed binary: the one the harness package pins in its devDependencies. */
  readonly installed: string
  /** The harness's layer with this binary (null: looked for on `pathEnv`), everything else plain. */
  readonly layer: (
    binary: string | null,
    pathEnv: string | undefined
  ) => Layer.Layer<HarnessService, never, CommandExecutor.CommandExecutor | FileSystem.FileSystem>
}

/** The preflight cases: the binary not found on PATH, a given binary that does not exist, the installed one found either way. */
export const preflightConformance = (spec: PreflightSpec) => {
  const preflight = (binary: string | null, pathEnv: string | undefined) =>
    HarnessService.pipe(
      Effect.flatMap((harness) => harness.preflight),
      Effect.provide(spec.layer(binary, pathEnv)),
      Effect.provide(NodeContext.layer)
    )

  describe(`${spec.program} harness: preflight`, () => {
    it.scopedLive(`fails with NotFound and how to install ${spec.program} when it is not on PATH`, () =>
      Effect.gen(function*() {
        const emptyDir = yield* tempDirectory(`spool-${spec.program}-`)
        const failure = yield* Effect.flip(preflight(null, emptyDir))
        assert.strictEqual(failure.reason, "NotFound")
        assert.include(failure.message, `'${spec.program}' was not found on PATH`)
        assert.include(failure.message, spec.install)
        assert.include(failure.message, spec.envVar)
      }))

    it.scopedLive(`fails with NotFound naming a ${spec.envVar} that does not exist`, () =>
      Effect.gen(function*() {
        const root = yield* tempDirectory(`spool-${spec.program}-`)
        const missing = path.join(root, `no-such-${spec.program}`)
        const failure = yield* Effect.flip(preflight(missing, process.env.PATH))
        assert.strictEqual(failure.reason, "NotFound")
        assert.include(failure.message, missing)
        assert.include(failure.message, spec.install)
      }))

    it.scopedLive("passes with the installed binary, on PATH or given explicitly", () =>
      Effect.gen(function*() {
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(preflight(spec.installed, undefined))))
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(preflight(null, path.dirname(spec.installed)))))
      }))
  })
}

/** How a harness reads its agent's output: the data its output cases need. */
export interface OutputSpec {
  /** The agent's name, for the suite's title. */
  readonly agent: string
  /** A fresh reader of one run's output. */
  readonly makeOutput: () => { readonly feed: (event: HarnessEvent) => ReadonlyArray<HarnessEvent> }
  /** Raw output of a run as it comes, stdout and stderr. */
  readonly chunks: ReadonlyArray<HarnessEvent>
}

/** The output cases: every raw chunk passed on as it came, the run ending with its exit. */
export const outputConformance = (spec: OutputSpec) => {
  describe(`${spec.agent} harness: output`, () => {
    it("passes every raw chunk on as Output, in order, and ends with Exited", () => {
      const output = spec.makeOutput()
      const exited = HarnessEvent.Exited({ exitCode: 0, signal: null })
      const result = sortEvents([...spec.chunks, exited].flatMap(output.feed))
      assert.deepStrictEqual(result.outputs, spec.chunks)
      assert.deepStrictEqual(result.events.at(-1), exited)
    })
  })
}

/** What spool reads from a usage limit: core's `Limited` event, without its tag. */
export interface ReadLimit {
  readonly message: string
  /** When the limit lifts (epoch ms), when the agent says. */
  readonly resetAt: number | null
  /** How long to wait, when the agent says so rather than when. */
  readonly retryAfterMs: number | null
  /** False for a quota that waiting does not restore (billing, credits). */
  readonly resets: boolean
}

/** One run of the agent, as it printed it, and what spool must read from it. */
export interface LimitCase {
  /** What the run is (`a rejected rate_limit_event`). */
  readonly name: string
  /** The run's raw output as it came, stdout and stderr. */
  readonly chunks: ReadonlyArray<HarnessEvent>
  /** The run's exit code (0 unless given). */
  readonly exitCode?: number
  /** Each limit read, in order (a loop waits on the last); none for a run that hit none. */
  readonly limited: ReadonlyArray<ReadLimit>
  /** The run's failures, where they are part of what the case pins. */
  readonly failed?: ReadonlyArray<string>
  /** Text shown to the person, each found in what is shown. */
  readonly shown?: ReadonlyArray<string>
  /** All that is shown to the person, where the case pins it whole. */
  readonly display?: string
}

/** How a harness reads the usage limits its agent reports: the data its limit cases need. */
export interface LimitSpec {
  /** The agent's name, for the suite's title. */
  readonly agent: string
  /** A fresh reader of one run's output, on a clock at `now` (a reset time may be a time of day). */
  readonly makeOutput: (now: number) => { readonly feed: (event: HarnessEvent) => ReadonlyArray<HarnessEvent> }
  /** The clock's time while the runs are read. */
  readonly now: number
  /** Runs that hit a usage limit, in the agent's own output: at least one. */
  readonly limits: ReadonlyArray<LimitCase>
  /** Runs that hit none, though they speak of limits: an ordinary error, a limit's words in the agent's own text. */
  readonly notLimits: ReadonlyArray<Omit<LimitCase, "limited">>
  /** A successful run whose agent writes `text` as its own words. */
  readonly agentSays: (text: string) => ReadonlyArray<HarnessEvent>
}

/**
 * The usage-limit cases: each run that hit a limit read as one, with its reset time or delay when
 * the agent gave one; a run that hit none read as none; and the very words of each limit, written
 * by the agent itself, never taken for a limit.
 */
export const limitConformance = (spec: LimitSpec) => {
  const read = (chunks: ReadonlyArray<HarnessEvent>, exitCode = 0) => {
    const output = spec.makeOutput(spec.now)
    const result = sortEvents([...chunks, HarnessEvent.Exited({ exitCode, signal: null })].flatMap(output.feed))
    return { ...result, limits: result.limited.map(({ _tag, ...limit }): ReadLimit => limit) }
  }
  const check = (run: Omit<LimitCase, "name">) => {
    const result = read(run.chunks, run.exitCode)
    assert.deepStrictEqual(result.limits, run.limited)
    if (run.failed !== undefined) assert.deepStrictEqual(result.failed, run.failed)
    for (const text of run.shown ?? []) assert.include(result.display, text)
    if (run.display !== undefined) assert.strictEqual(result.display, run.display)
  }

  describe(`${spec.agent} harness: usage limits`, () => {
    it("has a run that hits a limit to read", () => {
      assert.isNotEmpty(spec.limits)
      for (const run of spec.limits) assert.isNotEmpty(run.limited, run.name)
    })

    for (const run of spec.limits) it(`reads a limit: ${run.name}`, () => check(run))

    for (const run of spec.notLimits) it(`reads no limit: ${run.name}`, () => check({ ...run, limited: [] }))

    it("never takes the agent's own words for a limit, even a limit's very words", () => {
      for (const message of new Set(spec.limits.flatMap((run) => run.limited.map((limit) => limit.message)))) {
        const said = read(spec.agentSays(message))
        assert.deepStrictEqual(said.limits, [], message)
        assert.deepStrictEqual(said.failed, [], message)
      }
    })
  })
}
