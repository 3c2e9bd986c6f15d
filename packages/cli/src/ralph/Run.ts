import { FileSystem } from "@effect/platform"
import {
  type Change,
  CheckRunner,
  HarnessService,
  LoopEvents,
  LoopOptions,
  makeRedactor,
  PromptBuilder,
  readTextFile,
  runLoop,
  UsageLimitGate
} from "@spool/core"
import { Effect, Layer, Option, ParseResult, Schema } from "effect"
import { parseDuration } from "../Duration.js"
import { ExitCode, setExitCode } from "../ExitCode.js"
import { gitLayer } from "../Git.js"
import { harnessLayer } from "../Harnesses.js"
import * as TerminalReporter from "../TerminalReporter.js"
import { UsageError } from "../UsageError.js"
import { guardOptions, wholeNumber } from "./GuardOptions.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "./Options.js"
import { SettingsOrigin } from "./Settings.js"
import { afterLoop, placeLayer, workPlace } from "./Worktree.js"

const usage = (message: string) => new UsageError({ message })

const decodeLoopOptions = (input: unknown) =>
  Schema.decodeUnknown(LoopOptions)(input).pipe(
    Effect.mapError((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      return usage(issue?.message ?? "invalid loop options")
    })
  )

const readPrompt = (args: RalphArgs) =>
  Effect.gen(function*() {
    const positional = args.prompt.join(" ").trim()
    if (Option.isNone(args.promptFile)) return positional
    if (positional !== "") {
      return yield* usage("give the prompt either as arguments or with --prompt-file, not both")
    }
    const fs = yield* FileSystem.FileSystem
    const file = args.promptFile.value
    const text = yield* readTextFile(fs, file, { maxBytes: 8 * 1024 * 1024, hint: "shorten the prompt" }).pipe(
      Effect.mapError((error) => usage(`--prompt-file: ${error.message}`))
    )
    if (text === null) return yield* usage(`--prompt-file ${file} does not exist; check the path`)
    if (text.trim() === "") return yield* usage(`--prompt-file ${file} is empty; write the prompt into it`)
    return text.trim()
  })

/** The loop's settings from the command line; every mistake is a usage error before anything runs. */
const loopOptions = (args: RalphArgs) =>
  Effect.gen(function*() {
    return yield* decodeLoopOptions({
      minIterations: yield* wholeNumber(specs.minIterations, args.minIterations, 1),
      maxIterations: yield* wholeNumber(specs.maxIterations, args.maxIterations, 1),
      completionPromise: args.completionPromise,
      stream: !args.noStream,
      failFast: args.failFast,
      commit: !args.noCommit,
      inactivityTimeoutMs: yield* parseDuration("--inactivity-timeout", args.inactivityTimeout),
      historyCount: yield* wholeNumber(specs.historyCommits, args.historyCommits, 0),
      includeMerges: args.historyMerges,
      requireTasks: args.requireTasks,
      keepErrors: args.keepErrors,
      errorHistory: yield* wholeNumber(specs.errorHistory, args.errorHistory, 0),
      verify: args.verify,
      verifyTimeoutMs: yield* parseDuration("--verify-timeout", args.verifyTimeout),
      ...yield* guardOptions(args)
    })
  })

const exitCodes = {
  complete: ExitCode.Completed,
  "max-iterations": ExitCode.MaxIterations,
  stopped: ExitCode.GuardStop,
  "usage-limit": ExitCode.UsageLimit
} as const

/** Runs the loop on `change` and sets the exit code from how it ended. */
export const runChange = (args: RalphArgs, change: Change) =>
  Effect.gen(function*() {
    const userPrompt = yield* readPrompt(args)
    const options = yield* loopOptions(args)
    const harness = yield* harnessLayer(args.harness.trim(), {
      model: Option.getOrNull(args.model),
      allowAll: args.allowAll,
      harnessCommand: Option.getOrNull(args.harnessCommand)
    })
    const loop = Effect.gen(function*() {
      // An agent that cannot start must not leave a new worktree behind.
      if (args.worktree) yield* Effect.flatMap(HarnessService, (agent) => agent.preflight)
      const place = yield* workPlace(change, { worktree: args.worktree, commits: options.commit })
      const result = yield* runLoop({
        change: place.change,
        userPrompt: userPrompt === "" ? "Implement the change proposal below." : userPrompt,
        options,
        cwd: place.cwd,
        pid: process.pid,
        redact: makeRedactor(process.env),
        settings: yield* SettingsOrigin
      }).pipe(Effect.provide(Layer.merge(placeLayer(place), gitLayer(place.cwd))))
      yield* afterLoop(place, result.status === "complete")
      yield* setExitCode(exitCodes[result.status])
    })
    const live = Layer.merge(LoopEvents.layer, UsageLimitGate.layerPerLoop)
    yield* loop.pipe(Effect.provide(Layer.mergeAll(harness, PromptBuilder.layer, TerminalReporter.layer, CheckRunner.layer, live)))
  })
