import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import {
  type Change,
  ContextStore,
  ErrorJournal,
  HistoryStore,
  LoopLock,
  LoopOptions,
  makeRedactor,
  PromptBuilder,
  readTextFile,
  runLoop,
  Workspace
} from "@spool/core"
import { Effect, Layer, Option, ParseResult, Schema } from "effect"
import { selectChange } from "../ChangeSelection.js"
import { gitLayer } from "../Git.js"
import { harnessLayer } from "../Harnesses.js"
import { parseDuration } from "../Duration.js"
import { onlyChangeWithState, printStatus } from "../Status.js"
import * as TerminalReporter from "../TerminalReporter.js"
import { UsageError } from "../UsageError.js"
import { ExitCode, setExitCode } from "../ExitCode.js"
import { lockIdentity } from "../Process.js"

const prompt = Args.text({ name: "prompt" }).pipe(
  Args.withDescription("What the agent should do (words are joined with spaces); or use --prompt-file"),
  Args.repeated
)

const options = {
  change: Options.text("change").pipe(
    Options.withPseudoName("id"),
    Options.withAlias("c"),
    Options.withDescription("The change to work on: a directory under .spool/changes/, or a unique prefix of one (default: ask on a terminal, else required)"),
    Options.optional
  ),
  module: Options.text("module").pipe(
    Options.withPseudoName("id"),
    Options.withAlias("m"),
    Options.withDescription("The module (e.g. 002): narrows the changes to choose from, or selects its only one (default: none)"),
    Options.optional
  ),
  harness: Options.text("harness").pipe(
    Options.withPseudoName("name"),
    Options.withDescription("The agent harness: opencode, codex, or command (see --harness-command) (default: opencode)"),
    Options.withDefault("opencode")
  ),
  harnessCommand: Options.text("harness-command").pipe(
    Options.withPseudoName("command"),
    Options.withDescription("For --harness command: the agent's command line (split into words, no shell); the prompt arrives on stdin (default: none)"),
    Options.optional
  ),
  model: Options.text("model").pipe(
    Options.withPseudoName("provider/model"),
    Options.withDescription("The model, passed to the harness (e.g. anthropic/claude-sonnet) (default: the harness's own)"),
    Options.optional
  ),
  minIterations: Options.text("min-iterations").pipe(
    Options.withPseudoName("n"),
    Options.withDescription("Iterations to run at least, even after the completion promise (default: 1)"),
    Options.withDefault("1")
  ),
  maxIterations: Options.text("max-iterations").pipe(
    Options.withPseudoName("n"),
    Options.withDescription("Iterations to run at most (default: 20)"),
    Options.withDefault("20")
  ),
  completionPromise: Options.text("completion-promise").pipe(
    Options.withPseudoName("token"),
    Options.withDescription("The token the agent prints as <promise>TOKEN</promise> when the work is done (default: COMPLETE)"),
    Options.withDefault("COMPLETE")
  ),
  allowAll: Options.boolean("allow-all", { aliases: ["yolo", "dangerously-allow-all"] }).pipe(
    Options.withDescription("Let the harness auto-approve every tool permission (aliases: --yolo, --dangerously-allow-all) (default: off)")
  ),
  noInteractive: Options.boolean("no-interactive").pipe(
    Options.withDescription("Never prompt; without --change, fail instead of asking which change (default: off)")
  ),
  status: Options.boolean("status").pipe(
    Options.withDescription("Print the loop's state and recent iterations for the change, then exit (default: off)")
  ),
  json: Options.boolean("json").pipe(Options.withDescription("With --status: print one JSON object (default: off)")),
  addContext: Options.text("add-context").pipe(
    Options.withPseudoName("text"),
    Options.withDescription("Append text to the change's context; a running loop uses it from its next iteration (default: none)"),
    Options.optional
  ),
  clearContext: Options.boolean("clear-context").pipe(Options.withDescription("Empty the change's context (default: off)")),
  promptFile: Options.text("prompt-file").pipe(
    Options.withPseudoName("path"),
    Options.withDescription("Read the prompt from this file instead of the command line (default: none)"),
    Options.optional
  ),
  noStream: Options.boolean("no-stream").pipe(
    Options.withDescription("Do not show the agent's output live (it is still logged and checked for the promise) (default: off)")
  ),
  failFast: Options.boolean("fail-fast").pipe(
    Options.withDescription("Stop, with exit code 1, at the first iteration whose harness fails (default: off)")
  ),
  noCommit: Options.boolean("no-commit").pipe(
    Options.withDescription("Do not commit the agent's changes after each iteration (default: off)")
  ),
  inactivityTimeout: Options.text("inactivity-timeout").pipe(
    Options.withPseudoName("duration"),
    Options.withDescription("Stop an iteration whose harness prints nothing for this long (e.g. 30s, 5m, 1h30m) (default: 15m)"),
    Options.withDefault("15m")
  ),
  historyCommits: Options.text("history-commits").pipe(
    Options.withPseudoName("n"),
    Options.withDescription("Recent commits listed in each prompt (0 for none) (default: 10)"),
    Options.withDefault("10")
  ),
  historyMerges: Options.boolean("history-merges").pipe(
    Options.withDescription("Include merge commits in the prompt's recent commits (default: off)")
  ),
  errorHistory: Options.text("error-history").pipe(
    Options.withPseudoName("n"),
    Options.withDescription("Failures of earlier runs shown in each prompt, from errors.md; this run's are always shown (default: 3)"),
    Options.withDefault("3")
  ),
  keepErrors: Options.boolean("keep-errors").pipe(
    Options.withDescription("Keep errors.md when the change completes instead of archiving it (default: off)")
  ),
  requireTasks: Options.boolean("require-tasks").pipe(
    Options.withDescription("Refuse the completion promise while tasks.md has open tasks (default: off)")
  )
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
/** Options that take a value: given last without one, the parser leaves them among the prompt words. */
const valueFlags = new Set([
  "c",
  "m",
  ...["change", "module", "harness", "harnessCommand", "model", "minIterations", "maxIterations", "completionPromise", "addContext", "promptFile", "inactivityTimeout", "historyCommits", "errorHistory"].map(kebab)
])

type Parsed = Command.Command.ParseConfig<typeof options & { readonly prompt: typeof prompt }>

const usage = (message: string) => new UsageError({ message })

const parseCount = (flag: string, text: string) =>
  /^\s*\d+\s*$/.test(text)
    ? Effect.succeed(Number(text))
    : Effect.fail(usage(`${flag} must be a whole number, got '${text}'`))

const decodeLoopOptions = (input: unknown) =>
  Schema.decodeUnknown(LoopOptions)(input).pipe(
    Effect.mapError((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      return usage(issue?.message ?? "invalid loop options")
    })
  )

/** Resolves `--change` / `--module`, or asks, or explains what is missing. */
const targetChange = (args: Parsed) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    if (Option.isSome(args.module) && !/^\d+(_[\w.-]*)?$/.test(args.module.value.trim())) {
      return yield* usage(`invalid module id '${args.module.value}': use the module's number, e.g. --module 002`)
    }
    const moduleFilter = Option.map(args.module, (m) => m.trim().replace(/_.*$/, ""))
    if (Option.isSome(args.change)) {
      const change = yield* workspace.resolveChange(args.change.value)
      if (Option.isSome(moduleFilter) && change.moduleId !== moduleFilter.value) {
        return yield* usage(
          `change ${change.id} belongs to module ${change.moduleId ?? "(none)"}, not ${moduleFilter.value}; drop --module or pick another change`
        )
      }
      return change
    }
    const active = yield* workspace.activeChanges
    const candidates = Option.match(moduleFilter, {
      onNone: () => active,
      onSome: (m) => active.filter((id) => id.startsWith(`${m}-`))
    })
    if (Option.isSome(moduleFilter) && candidates.length === 0) {
      return yield* usage(`module ${moduleFilter.value} has no active changes; active changes: ${active.join(", ") || "none"}`)
    }
    if (Option.isSome(moduleFilter) && candidates.length === 1) {
      return yield* workspace.resolveChange(candidates[0]!)
    }
    const interactive = !args.noInteractive && process.stdin.isTTY === true && !process.env.CI
    if (!interactive) {
      return yield* usage(
        `--change is required when spool cannot ask (no terminal, --no-interactive or CI); active changes: ${candidates.join(", ") || "none"}`
      )
    }
    if (candidates.length === 0) return yield* usage("there are no active changes under .spool/changes/ to work on")
    if (candidates.length === 1) return yield* workspace.resolveChange(candidates[0]!)
    return yield* workspace.resolveChange(yield* selectChange(candidates))
  })

/** `--status` without `--change` picks the one change that has loop state. */
const statusTarget = (args: Parsed) =>
  Option.isSome(args.change) || Option.isSome(args.module)
    ? Effect.map(targetChange(args), (change) => change.id)
    : onlyChangeWithState

const readPrompt = (args: Parsed) =>
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

const runMode = (args: Parsed, change: Change) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const userPrompt = yield* readPrompt(args)
    const options = yield* decodeLoopOptions({
      minIterations: yield* parseCount("--min-iterations", args.minIterations),
      maxIterations: yield* parseCount("--max-iterations", args.maxIterations),
      completionPromise: args.completionPromise,
      stream: !args.noStream,
      failFast: args.failFast,
      commit: !args.noCommit,
      inactivityTimeoutMs: yield* parseDuration("--inactivity-timeout", args.inactivityTimeout),
      historyCount: yield* parseCount("--history-commits", args.historyCommits),
      includeMerges: args.historyMerges,
      requireTasks: args.requireTasks,
      keepErrors: args.keepErrors,
      errorHistory: yield* parseCount("--error-history", args.errorHistory)
    })
    const harness = yield* harnessLayer(args.harness.trim(), {
      model: Option.getOrNull(args.model),
      allowAll: args.allowAll,
      harnessCommand: Option.getOrNull(args.harnessCommand)
    })
    const loop = Effect.gen(function*() {
      const result = yield* runLoop({
        change,
        userPrompt: userPrompt === "" ? "Implement the change proposal below." : userPrompt,
        options,
        cwd: workspace.root,
        pid: process.pid,
        redact: makeRedactor(process.env)
      })
      yield* setExitCode(result.status === "complete" ? ExitCode.Completed : ExitCode.MaxIterations)
    })
    yield* loop.pipe(
      Effect.provide(Layer.mergeAll(harness, gitLayer(workspace.root), PromptBuilder.layer, TerminalReporter.layer))
    )
  })

const handler = (args: Parsed) =>
  Effect.gen(function*() {
    // Unknown flags would otherwise be taken as words of the prompt.
    const flagLike = args.prompt.find((word) => /^--?[A-Za-z][\w-]*(=.*)?$/.test(word))
    if (flagLike !== undefined) {
      const name = flagLike.replace(/^-+/, "").replace(/=.*$/, "")
      return yield* usage(
        valueFlags.has(name)
          ? `${flagLike} needs a value, e.g. ${flagLike} <${name}>`
          : `unknown option '${flagLike}'; see spool ralph --help (quote a prompt that starts with '-')`
      )
    }
    const modes = [args.status, Option.isSome(args.addContext), args.clearContext].filter(Boolean).length
    if (modes > 1) return yield* usage("use only one of --status, --add-context and --clear-context at a time")
    if (Option.isSome(args.addContext) && args.addContext.value.trim() === "") {
      return yield* usage("--add-context needs some text, e.g. --add-context \"use the v2 API\"")
    }
    if (args.json && !args.status) return yield* usage("--json goes with --status")

    if (args.status) {
      return yield* printStatus(yield* statusTarget(args), args.json)
    }
    const change = yield* targetChange(args)
    const contexts = yield* ContextStore
    if (Option.isSome(args.addContext)) {
      yield* contexts.append(change.id, args.addContext.value)
      yield* Effect.sync(() => console.log(`added context for ${change.id}; the loop uses it from its next iteration`))
      return
    }
    if (args.clearContext) {
      yield* contexts.clear(change.id)
      yield* Effect.sync(() => console.log(`cleared context for ${change.id}`))
      return
    }
    yield* runMode(args, change)
  }).pipe(
    Effect.provide(
      Layer.mergeAll(ContextStore.layer, HistoryStore.layer, ErrorJournal.layer, LoopLock.layer(lockIdentity)).pipe(
        Layer.provideMerge(Workspace.layer(process.cwd()))
      )
    )
  )

const make = <Name extends string>(name: Name, description: string) =>
  Command.make(name, { ...options, prompt }).pipe(Command.withDescription(description), Command.withHandler(handler))

/** `ralph` and `loop` are one command under two names: same options, same handler, same help. */
export const ralph = make("ralph", "Run an agent in a loop on a change until it prints the completion promise")
export const loop = make("loop", "Run an agent in a loop on a change until it prints the completion promise (alias of ralph)")
