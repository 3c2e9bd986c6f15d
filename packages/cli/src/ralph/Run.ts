import { type CommandExecutor, FileSystem, Path } from "@effect/platform"
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
import { gitLayer } from "../Git.js"
import { harnessLayer } from "../Harnesses.js"
import { Invocation } from "../Invocation.js"
import type { OptionSpec } from "../OptionSpec.js"
import { lockIdentity } from "../Process.js"
import * as TerminalReporter from "../TerminalReporter.js"
import { UsageError } from "../UsageError.js"
import { guardOptions, wholeNumber } from "./GuardOptions.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "./Options.js"
import { SettingsOrigin } from "./Settings.js"
import { afterLoop, placeLayer, workPlace } from "./Worktree.js"

const usage = (message: string) => new UsageError({ message })

/** The flag that sets each of the loop's options: core names the field, the user reads the flag. */
const flags: { readonly [Field in keyof LoopOptions]: OptionSpec } = {
  minIterations: specs.minIterations,
  maxIterations: specs.maxIterations,
  completionPromise: specs.completionPromise,
  stream: specs.noStream,
  failFast: specs.failFast,
  commit: specs.noCommit,
  inactivityTimeoutMs: specs.inactivityTimeout,
  historyCount: specs.historyCommits,
  includeMerges: specs.historyMerges,
  requireTasks: specs.requireTasks,
  keepErrors: specs.keepErrors,
  errorHistory: specs.errorHistory,
  maxCostUsd: specs.maxCost,
  maxTokens: specs.maxTokens,
  maxDurationMs: specs.maxDuration,
  stallIterations: specs.stallIterations,
  maxConsecutiveFailures: specs.maxConsecutiveFailures,
  verify: specs.verify,
  verifyTimeoutMs: specs.verifyTimeout,
  maxLimitWaitMs: specs.maxLimitWait
}
const fieldNames = new RegExp(`\\b(?:${Object.keys(flags).join("|")})\\b`, "g")

/** Core's message about a field, with each field named as its flag. */
export const inFlags = (message: string) => message.replace(fieldNames, (field) => `--${flags[field as keyof LoopOptions].name}`)

const decodeLoopOptions = (input: unknown) =>
  Schema.decodeUnknown(LoopOptions)(input).pipe(
    Effect.mapError((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      return usage(issue === undefined ? "invalid loop options" : inFlags(issue.message))
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
    // Relative to where spool was started, not to this process's directory; messages name it as given.
    const path = (yield* Path.Path).resolve((yield* Invocation).cwd, file)
    const text = yield* readTextFile(fs, path, { maxBytes: 8 * 1024 * 1024, hint: "shorten the prompt" }).pipe(
      Effect.mapError((error) => usage(`--prompt-file: ${error.message.split(path).join(file)}`))
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

/** What every loop of one command shares, read and checked once, before any loop runs. */
export interface PreparedLoop {
  readonly userPrompt: string
  readonly options: LoopOptions
  readonly harness: Layer.Layer<HarnessService, never, FileSystem.FileSystem | CommandExecutor.CommandExecutor>
  /** Run in a worktree of its own. */
  readonly worktree: boolean
  /** A sweep merges the work once the change completes: no hint to merge it by hand. */
  readonly merged?: boolean
}

/** The prompt, the options and the harness from the command line; every mistake is a usage error here. */
export const prepareLoop = (args: RalphArgs) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const userPrompt = yield* readPrompt(args)
    const options = yield* loopOptions(args)
    const harness = yield* harnessLayer(args.harness.trim(), {
      model: Option.getOrNull(args.model),
      allowAll: args.allowAll,
      harnessCommand: Option.getOrNull(args.harnessCommand)
    }, invocation)
    return {
      userPrompt: userPrompt === "" ? "Implement the change proposal below." : userPrompt,
      options,
      harness,
      worktree: args.worktree
    } satisfies PreparedLoop
  })

/**
 * Runs the loop on `change` as `prepared` says: how it ended is the result. The loop's events and
 * usage-limit gate come from the caller (one loop's own, or a sweep's shared ones).
 */
export const runPrepared = (prepared: PreparedLoop, change: Change) =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    const { options } = prepared
    const loop = Effect.gen(function*() {
      // An agent that cannot start must not leave a new worktree behind.
      if (prepared.worktree) yield* Effect.flatMap(HarnessService, (agent) => agent.preflight)
      const place = yield* workPlace(change, { worktree: prepared.worktree, commits: options.commit })
      const result = yield* runLoop({
        change: place.change,
        userPrompt: prepared.userPrompt,
        options,
        cwd: place.cwd,
        worktree: place.worktree,
        pid: invocation.pid,
        redact: makeRedactor(invocation.env),
        settings: yield* SettingsOrigin
      }).pipe(Effect.provide(Layer.merge(placeLayer(place, lockIdentity(invocation.pid)), gitLayer(place.cwd))))
      if (prepared.merged !== true || result.status !== "complete") yield* afterLoop(place, result.status === "complete")
      return result
    })
    return yield* loop.pipe(
      Effect.provide(Layer.mergeAll(prepared.harness, PromptBuilder.layer, TerminalReporter.loopReporter(change.id), CheckRunner.layer))
    )
  })

/** Runs the loop on `change`, on its own: how it ended is the result. */
export const runChange = (args: RalphArgs, change: Change) =>
  Effect.flatMap(prepareLoop(args), (prepared) => runPrepared(prepared, change)).pipe(
    Effect.provide(Layer.merge(LoopEvents.layer, UsageLimitGate.layerPerLoop))
  )
