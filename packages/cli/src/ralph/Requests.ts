import { FileSystem, Path } from "@effect/platform"
import { type LoopRequest, type SweepTarget, closest, type NoticeRequest } from "@spool/app"
import { Invocation } from "@spool/app/host"
import { isNoticeEvent, LoopOptions, NOTICE_EVENTS, type NoticeEvent, readTextFile } from "@spool/core"
import { Clock, Effect, Option, ParseResult, Schema } from "effect"
import { parseDeadline } from "../DeadlineOption.js"
import { parseDuration } from "../Duration.js"
import type { OptionSpec } from "../OptionSpec.js"
import { usageError } from "../UsageError.js"
import { guardOptions, wholeNumber } from "./GuardOptions.js"
import { type RalphArgs, ralphOptionSpecs as specs } from "./Options.js"
import { sandboxSettings } from "./SandboxOptions.js"
import { SettingsOrigin } from "./Settings.js"
import { moduleIdOf } from "./Targeting.js"

const usage = usageError

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

/** Core's issue with a loop option, the field its path names said as its flag: `--max-iterations must be ...`. */
export const describeIssue = (issue: Pick<ParseResult.ArrayFormatterIssue, "path" | "message">) => {
  const field = issue.path[0]
  return typeof field === "string" && Object.hasOwn(flags, field) ? `--${flags[field as keyof LoopOptions].name} ${issue.message}` : issue.message
}

/** The loop's options as core checks them; a mistake names the option of the field its path ends at. */
const decodeLoopOptions = (input: unknown) =>
  Schema.decodeUnknown(LoopOptions)(input).pipe(
    Effect.mapError((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      if (issue === undefined) return usage("invalid loop options")
      const field = issue.path[0]
      return usage(describeIssue(issue), typeof field === "string" && Object.hasOwn(flags, field) ? flags[field as keyof LoopOptions].name : undefined)
    })
  )

const readPrompt = (args: RalphArgs) =>
  Effect.gen(function*() {
    const positional = args.prompt.join(" ").trim()
    if (Option.isNone(args.promptFile)) return positional
    if (positional !== "") {
      return yield* usage("give the prompt either as arguments or with --prompt-file, not both", specs.promptFile.name)
    }
    const fs = yield* FileSystem.FileSystem
    const file = args.promptFile.value
    // Relative to where spool was started, not to this process's directory; messages name it as given.
    const path = (yield* Path.Path).resolve((yield* Invocation).cwd, file)
    const text = yield* readTextFile(fs, path, { maxBytes: 8 * 1024 * 1024, hint: "shorten the prompt" }).pipe(
      Effect.mapError((error) => usage(`--prompt-file: ${error.message.split(path).join(file)}`, specs.promptFile.name))
    )
    if (text === null) return yield* usage(`--prompt-file ${file} does not exist; check the path`, specs.promptFile.name)
    if (text.trim() === "") return yield* usage(`--prompt-file ${file} is empty; write the prompt into it`, specs.promptFile.name)
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
      inactivityTimeoutMs: yield* parseDuration(specs.inactivityTimeout.name, args.inactivityTimeout),
      historyCount: yield* wholeNumber(specs.historyCommits, args.historyCommits, 0),
      includeMerges: args.historyMerges,
      requireTasks: args.requireTasks,
      keepErrors: args.keepErrors,
      errorHistory: yield* wholeNumber(specs.errorHistory, args.errorHistory, 0),
      verify: args.verify,
      verifyTimeoutMs: yield* parseDuration(specs.verifyTimeout.name, args.verifyTimeout),
      ...yield* guardOptions(args)
    })
  })

/** `--notify-on complete,failed`: the events, each known. */
const noticeEvents = (given: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isNone(given)) return null
    const names = given.value.split(",").map((name) => name.trim()).filter((name) => name !== "")
    if (names.length === 0) {
      return yield* usage(`--notify-on needs one or more events, e.g. --notify-on complete,failed; the events: ${NOTICE_EVENTS.join(", ")}`, specs.notifyOn.name)
    }
    const events: Array<NoticeEvent> = []
    for (const name of names) {
      if (!isNoticeEvent(name)) {
        const near = closest(name, NOTICE_EVENTS)
        return yield* usage(
          `--notify-on: unknown event '${name}'${near === null ? "" : `; did you mean '${near}'?`}; the events: ${NOTICE_EVENTS.join(", ")}`,
          specs.notifyOn.name
        )
      }
      if (!events.includes(name)) events.push(name)
    }
    return events
  })

/** Who is told of what, as the command line says: `--notify`, `--webhook`, `--notify-on`. */
const noticeRequest = (args: RalphArgs) =>
  Effect.map(noticeEvents(args.notifyOn), (on): NoticeRequest => ({ commands: args.notify, webhooks: args.webhook, on }))

/** What every loop of the command is asked to be, from the command line; every mistake of its values is a usage error here. */
export const loopRequest = (args: RalphArgs) =>
  Effect.gen(function*() {
    const remote = Option.getOrNull(args.remote)
    return {
      prompt: yield* readPrompt(args),
      options: yield* loopOptions(args),
      agent: {
        harness: args.harness,
        model: Option.getOrNull(args.model),
        allowAll: args.allowAll,
        harnessCommand: Option.getOrNull(args.harnessCommand)
      },
      // The app reads each spec and says what is wrong with one; here they are only trimmed.
      fallback: args.fallback.map((spec) => spec.trim()),
      rotate: args.rotate,
      review: args.review.map((spec) => spec.trim()),
      maxReviews: yield* wholeNumber(specs.maxReviews, args.maxReviews, 1),
      worktree: args.worktree,
      resume: args.resume,
      remote: remote === null ? null : { name: remote, leaseTtlMs: yield* parseDuration(specs.leaseTtl.name, args.leaseTtl) },
      deadline: Option.isNone(args.deadline) ? null : yield* parseDeadline(args.deadline.value, yield* Clock.currentTimeMillis),
      notices: yield* noticeRequest(args),
      sandbox: yield* sandboxSettings(args),
      settings: yield* SettingsOrigin
    } satisfies LoopRequest
  })

/** Which changes the sweep takes, from the command line; every mistake is a usage error before anything runs. */
export const sweepTarget = (args: RalphArgs) =>
  Effect.gen(function*() {
    const moduleId = Option.fromNullable(yield* moduleIdOf(args))
    if (args.continueModule && Option.isNone(moduleId)) {
      return yield* usage("--continue-module goes with --module: spool ralph --module 002 --continue-module", specs.continueModule.name)
    }
    const sweepsAll = args.continueReady || args.continueModule
    if (sweepsAll && args.changes.length > 0) {
      const spec = args.continueReady ? specs.continueReady : specs.continueModule
      return yield* usage(`--${spec.name} takes every ready change; give it without --change, or name the changes with --change, once each`, spec.name)
    }
    if (sweepsAll) return Option.isSome(moduleId) ? { _tag: "Module", moduleId: moduleId.value } satisfies SweepTarget : { _tag: "AllReady" } satisfies SweepTarget
    return { _tag: "Named", changes: args.changes, moduleId: Option.getOrNull(moduleId) } satisfies SweepTarget
  })
