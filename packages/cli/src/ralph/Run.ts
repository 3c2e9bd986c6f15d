import { type CommandExecutor, FileSystem, Path } from "@effect/platform"
import {
  branchOf,
  type Change,
  CheckRunner,
  holdLease,
  leaseLayer,
  type LockIdentity,
  LoopReporter,
  RemoteHome,
  Workspace,
  HarnessService,
  LoopEvents,
  LoopOptions,
  makeRedactor,
  type NotifySettings,
  PromptBuilder,
  readTextFile,
  runLoop,
  UsageLimitGate
} from "@spool/core"
import { Clock, Effect, Layer, Option, ParseResult, Random, Schema } from "effect"
import { GitRemoteHome } from "@spool/git"
import { parseDeadline } from "../DeadlineOption.js"
import { requireRemote } from "./List.js"
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
import { type Beside, withDashboard } from "../serve/ServeMode.js"
import { notifySettings, secretEnv, withNotices } from "./Notify.js"
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
  /** `--resume`: go on with the change's last run. */
  readonly resume: boolean
  /** `--remote`: the loop kept on this git remote, under a lease of this TTL. */
  readonly remote: { readonly name: string; readonly leaseTtlMs: number } | null
  /** `--deadline`, as epoch ms. */
  readonly deadline: number | null
  /** A sweep merges the work once the change completes: no hint to merge it by hand. */
  readonly merged?: boolean
  /** Who is told of the loops' events (`--notify`, `--webhook`); null: nobody. */
  readonly notify: NotifySettings | null
  /** Values to hide wherever the agent's output is kept, beside the environment's secrets: the webhooks' URLs. */
  readonly secrets: ReadonlyArray<string>
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
    const remote = Option.getOrNull(args.remote)
    if (remote !== null && !/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(remote)) {
      return yield* usage(`--remote must name a git remote (as git remote -v lists them), got '${remote}'`)
    }
    const deadline = Option.isNone(args.deadline) ? null : yield* parseDeadline(args.deadline.value, yield* Clock.currentTimeMillis)
    const notify = yield* notifySettings(args, (yield* Workspace).root)
    return {
      userPrompt: userPrompt === "" ? "Implement the change proposal below." : userPrompt,
      options,
      harness,
      worktree: args.worktree || remote !== null,
      resume: args.resume,
      remote: remote === null ? null : { name: remote, leaseTtlMs: yield* parseDuration("--lease-ttl", args.leaseTtl) },
      deadline,
      notify,
      secrets: notify?.targets.flatMap((target) => (target._tag === "Webhook" ? [target.url] : [])) ?? []
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
    const identity = lockIdentity(invocation.pid)
    const loop = Effect.gen(function*() {
      // An agent that cannot start must not leave a new worktree behind, nor take a lease.
      if (prepared.worktree) yield* Effect.flatMap(HarnessService, (agent) => agent.preflight)
      // With --remote: the lease first (another machine's live one: exit 73, nothing touched), then the remote's branch and state.
      const lease = prepared.remote === null ? null : yield* takeRemoteHome(change, prepared.remote, identity)
      const place = yield* workPlace(change, { worktree: prepared.worktree, commits: options.commit })
      const lock = placeLayer(place, identity)
      const result = yield* runLoop({
        change: place.change,
        userPrompt: prepared.userPrompt,
        options,
        cwd: place.cwd,
        worktree: place.worktree,
        pid: invocation.pid,
        redact: makeRedactor(secretEnv(invocation.env, prepared.secrets)),
        settings: yield* SettingsOrigin,
        resume: prepared.resume,
        deadline: prepared.deadline
      }).pipe(Effect.provide(Layer.merge(lease === null ? lock : leaseLayer(lease).pipe(Layer.provide(lock)), gitLayer(place.cwd))))
      if (prepared.merged !== true || result.status !== "complete") {
        yield* afterLoop(place, result.status === "complete", prepared.remote?.name ?? null)
      }
      return result
    }).pipe(Effect.scoped)
    return yield* loop.pipe(
      Effect.provide(Layer.mergeAll(prepared.harness, PromptBuilder.layer, TerminalReporter.loopReporter(change.id), CheckRunner.layer))
    )
  })

/**
 * Takes the change's lease on `remote` for the scope and brings its branch and state from there:
 * a live holder elsewhere fails it (exit 73) before anything is written.
 */
const takeRemoteHome = (change: Change, remote: { readonly name: string; readonly leaseTtlMs: number }, identity: LockIdentity) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const reporter = yield* LoopReporter
    yield* requireRemote(remote.name)
    const { env } = yield* Invocation
    // A git command against the remote that takes longer than a third of the lease's time (the
    // time between renewals), and at least a minute, counts as the remote not answering.
    const within = Math.max(60_000, Math.ceil(remote.leaseTtlMs / 3 / 1000) * 1000)
    const home = yield* GitRemoteHome.make({ root: workspace.root, remote: remote.name, env, within, stateDir: workspace.stateDir })
    const tag = (yield* Random.nextIntBetween(0, 36 ** 6)).toString(36).padStart(6, "0")
    const held = yield* holdLease(change.id, {
      ttlMs: remote.leaseTtlMs,
      identity: { holder: `${identity.host}/${identity.pid}/${tag}`, host: identity.host, pid: identity.pid },
      leftToExpire: (lease) =>
        reporter.warn(`the lease of ${change.id} on ${remote.name} is left to expire at ${lease.expiresAt}: the remote did not answer in time to give it up`)
    }).pipe(Effect.provideService(RemoteHome, home))
    if (held.over !== null) {
      yield* reporter.warn(
        `took over the lease of ${change.id} on ${remote.name} from pid ${held.over.pid} on ${held.over.host}, which expired at ${held.over.expiresAt} unrenewed`
      )
    }
    yield* workspace.ensureStateDir(change.id)
    const pulled = yield* home.pull(change.id)
    for (const note of pulled.notes) yield* reporter.warn(note)
    yield* reporter.line(
      pulled.branch
        ? `on ${remote.name}: branch ${branchOf(change.id)}${pulled.state ? " and the loop's state" : ""} fetched; the lease is this loop's`
        : `on ${remote.name}: no branch ${branchOf(change.id)} yet, it starts from the current branch; the lease is this loop's`
    )
    return held
  })

/**
 * Runs the loop on `change`, on its own: how it ended is the result. Once its options are checked,
 * it runs `beside` what the command line asks for (the dashboard of `--serve`).
 */
export const runChange = (args: RalphArgs, change: Change, beside: Beside = withDashboard(null)) =>
  Effect.flatMap(prepareLoop(args), (prepared) => beside(withNotices(prepared.notify, runPrepared(prepared, change)))).pipe(
    Effect.provide(Layer.merge(LoopEvents.layer, UsageLimitGate.layerPerLoop))
  )
