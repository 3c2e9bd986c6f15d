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
 * own data: finding the agent's binary before a loop starts, and passing its raw output on.
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
