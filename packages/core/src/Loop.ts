import { FileSystem } from "@effect/platform"
import { Clock, Data, Duration, Effect, Ref, Schema, Stream } from "effect"
import { readFileOrNull } from "./AtomicFile.js"
import { makeCompletionDetector } from "./CompletionDetector.js"
import { ContextStore } from "./ContextStore.js"
import type { HarnessUsage, IterationOutcome, IterationRecord, LoopOptions, LoopState, LoopStatus } from "./Domain.js"
import { type GitError, GitSummary } from "./GitSummary.js"
import { HarnessService } from "./HarnessService.js"
import { HistoryStore } from "./HistoryStore.js"
import { formatBanner, formatCommits, formatSummary } from "./LoopFormat.js"
import { LoopReporter } from "./LoopReporter.js"
import { PromptBuilder, type PromptSection } from "./PromptBuilder.js"
import { StateError } from "./StateError.js"
import type { Change } from "./Workspace.js"

/** `--fail-fast` was set and an iteration failed. */
export class LoopFailedError extends Schema.TaggedError<LoopFailedError>()("LoopFailedError", {
  iteration: Schema.Int,
  exitCode: Schema.NullOr(Schema.Int),
  signal: Schema.NullOr(Schema.String),
  outcome: Schema.String
}) {
  override get message() {
    const how = this.outcome === "timeout"
      ? "timed out"
      : this.signal !== null
      ? `was killed by ${this.signal}`
      : `exited with code ${this.exitCode}`
    return `iteration ${this.iteration} failed (the harness ${how}) and --fail-fast is set; see spool ralph --status`
  }
}

/** An iteration whose harness exited non-zero, was killed or timed out. Already recorded; the policy decides what follows. */
class IterationFailure extends Data.TaggedError("IterationFailure")<{ readonly record: IterationRecord }> {}

class InactivityTimeout extends Data.TaggedError("InactivityTimeout") {}

export interface LoopRun {
  readonly change: Change
  readonly userPrompt: string
  readonly options: LoopOptions
  /** Where the agent works: the repository root. */
  readonly cwd: string
  /** This process, recorded in the state file. */
  readonly pid: number
}

export interface LoopResult {
  readonly run: string
  readonly status: Extract<LoopStatus, "complete" | "max-iterations">
  readonly iterations: number
}

/**
 * The one place that decides whether a failed iteration stops the loop: with `--fail-fast` it
 * becomes a `LoopFailedError`; otherwise its record stands and the loop goes on.
 */
const failurePolicy = (failFast: boolean) =>
<E, R>(iteration: Effect.Effect<IterationRecord, IterationFailure | E, R>) =>
  Effect.catchIf(iteration, (error): error is IterationFailure => error instanceof IterationFailure, ({ record }) =>
    failFast
      ? Effect.fail(
        new LoopFailedError({
          iteration: record.iteration,
          exitCode: record.exitCode,
          signal: record.signal,
          outcome: record.outcome
        })
      )
      : Effect.succeed(record))

const newRunId = (now: number) =>
  `${new Date(now).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}-${Math.random().toString(36).slice(2, 6)}`

const addUsage = (total: HarnessUsage | null, next: HarnessUsage): HarnessUsage =>
  total === null ? next : {
    inputTokens: total.inputTokens + next.inputTokens,
    outputTokens: total.outputTokens + next.outputTokens,
    reasoningTokens: total.reasoningTokens + next.reasoningTokens,
    cacheReadTokens: total.cacheReadTokens + next.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + next.cacheWriteTokens,
    cost: total.cost + next.cost
  }

/** Runs iterations until the promise is accepted or `maxIterations` have run. */
export const runLoop = (input: LoopRun) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const contexts = yield* ContextStore
    const history = yield* HistoryStore
    const git = yield* GitSummary
    const harness = yield* HarnessService
    const builder = yield* PromptBuilder
    const reporter = yield* LoopReporter
    const { change, options } = input
    const changeId = change.id

    const loopStartedAt = yield* Clock.currentTimeMillis
    const run = newRunId(loopStartedAt)
    const state = yield* Ref.make<LoopState>({
      changeId,
      run,
      status: "running",
      iteration: 0,
      minIterations: options.minIterations,
      maxIterations: options.maxIterations,
      startedAt: new Date(loopStartedAt).toISOString(),
      updatedAt: new Date(loopStartedAt).toISOString(),
      pid: input.pid
    })
    const saveState = (patch: Partial<LoopState>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const next = yield* Ref.updateAndGet(state, (s) => ({ ...s, ...patch, updatedAt: new Date(now).toISOString() }))
        yield* history.writeState(changeId, next)
      })

    const gitWarned = yield* Ref.make(false)
    const gitOrWarn = <A>(effect: Effect.Effect<A, GitError>, fallback: A) =>
      Effect.catchTag(effect, "GitError", (error) =>
        Ref.getAndSet(gitWarned, true).pipe(
          Effect.flatMap((warned) => (warned ? Effect.void : reporter.warn(error.message))),
          Effect.as(fallback)
        ))

    const readDocument = (path: string) =>
      readFileOrNull(fs, path).pipe(
        Effect.flatMap((text) =>
          text === null ? Effect.fail(new StateError({ reason: "Read", path, detail: "the file is missing" })) : Effect.succeed(text)
        )
      )

    const promptSections = Effect.gen(function*() {
      const sections: Array<PromptSection> = []
      if (options.historyCount > 0 && git.repository) {
        const commits = yield* gitOrWarn(
          git.recentCommits({ count: options.historyCount, includeMerges: options.includeMerges }),
          []
        )
        if (commits.length > 0) sections.push({ title: "Recent commits", body: formatCommits(commits) })
      }
      return sections
    })

    const runIteration = (iteration: number) =>
      Effect.gen(function*() {
        // Reloaded every iteration, so context added from another terminal shows up at the next one.
        const context = yield* contexts.load(changeId)
        const proposal = yield* readDocument(change.proposalPath)
        const module = change.modulePath === null ? null : yield* readDocument(change.modulePath)
        const prompt = builder.build({
          iteration,
          minIterations: options.minIterations,
          maxIterations: options.maxIterations,
          completionPromise: options.completionPromise,
          context,
          changeId,
          moduleId: change.moduleId,
          userPrompt: input.userPrompt,
          proposal,
          module,
          sections: yield* promptSections
        })

        const startedAt = yield* Clock.currentTimeMillis
        yield* saveState({ iteration })
        yield* reporter.line(formatBanner(iteration, options.maxIterations, startedAt - loopStartedAt))
        const before = yield* gitOrWarn(git.snapshot, null)

        const detector = makeCompletionDetector(options.completionPromise)
        const exit = { exitCode: null as number | null, signal: null as string | null, timedOut: false }
        let usage: HarnessUsage | null = null
        const warnings: Array<string> = []
        let displayAtLineStart = true

        const finish = (outcome: IterationOutcome | null) =>
          Effect.gen(function*() {
            const durationMs = (yield* Clock.currentTimeMillis) - startedAt
            const failed = exit.timedOut || exit.signal !== null || exit.exitCode !== 0
            const accepted = detector.detected() && iteration >= options.minIterations
            const decided: IterationOutcome = outcome ??
              (accepted ? "complete" : exit.timedOut ? "timeout" : failed ? "failed" : "continue")
            const summary = outcome === "interrupted" ? null : yield* gitOrWarn(git.changesSince(before), null)
            let commit: string | null = null
            if (options.commit && summary !== null && summary.changedFiles > 0) {
              commit = yield* git.commitAll(`spool ralph: ${changeId} iteration ${iteration}`).pipe(
                Effect.catchTag("GitError", (error) =>
                  Effect.as(Effect.sync(() => warnings.push(`auto-commit failed: ${error.detail}`)), null))
              )
            }
            const record: IterationRecord = {
              run,
              iteration,
              startedAt: new Date(startedAt).toISOString(),
              durationMs,
              exitCode: exit.exitCode,
              signal: exit.signal,
              completionDetected: detector.detected(),
              outcome: decided,
              git: summary,
              commit,
              usage,
              warnings
            }
            if (!displayAtLineStart) yield* reporter.write("\n")
            yield* history.append(changeId, record)
            yield* reporter.line(formatSummary(record))
            for (const warning of warnings) yield* reporter.warn(warning)
            if (detector.detected() && !accepted) {
              yield* reporter.line(
                `completion promise seen, but --min-iterations is ${options.minIterations}: going on`
              )
            }
            return record
          })

        const consume = Effect.scoped(
          Effect.gen(function*() {
            const log = yield* history.openLog(changeId, run, iteration)
            yield* log.write(`=== prompt (iteration ${iteration}) ===\n${prompt}\n=== output ===\n`)
            yield* harness.run({ prompt, changeId, iteration, cwd: input.cwd }).pipe(
              Stream.timeoutFail(() => new InactivityTimeout(), Duration.millis(options.inactivityTimeoutMs)),
              Stream.runForEach((event) => {
                switch (event._tag) {
                  case "Output":
                    return log.write(event.stream === "stderr" ? prefixLines(event.text, "[stderr] ") : event.text)
                  case "Display":
                    if (!options.stream || event.text === "") return Effect.void
                    displayAtLineStart = event.text.endsWith("\n")
                    return reporter.write(event.text)
                  case "AgentText":
                    return Effect.sync(() => void detector.feed(event.text))
                  case "Usage":
                    return Effect.sync(() => void (usage = addUsage(usage, event.usage)))
                  case "Warning":
                    return Effect.sync(() => void warnings.push(event.message))
                  case "Exited":
                    return Effect.sync(() => {
                      exit.exitCode = event.exitCode
                      exit.signal = event.signal
                    })
                }
              }),
              Effect.catchTag("InactivityTimeout", () =>
                Effect.sync(() => {
                  exit.timedOut = true
                  warnings.push(
                    `the harness was silent for ${Duration.format(Duration.millis(options.inactivityTimeoutMs))} and was stopped`
                  )
                }))
            )
          })
        )

        yield* consume.pipe(
          Effect.onInterrupt(() => finish("interrupted").pipe(Effect.ignore))
        )
        const record = yield* finish(null)
        if (record.outcome === "failed" || record.outcome === "timeout") {
          return yield* new IterationFailure({ record })
        }
        return record
      })

    yield* saveState({})
    if (!git.repository) {
      yield* reporter.warn("not inside a git repository: iterations will not be summarized or committed")
    }

    const policy = failurePolicy(options.failFast)
    const loop = Effect.gen(function*() {
      for (let iteration = 1;; iteration++) {
        const record = yield* policy(runIteration(iteration))
        if (record.outcome === "complete") return { run, status: "complete", iterations: iteration } as const
        if (iteration >= options.maxIterations) return { run, status: "max-iterations", iterations: iteration } as const
      }
    })

    const result: LoopResult = yield* loop.pipe(
      Effect.tapErrorTag("LoopFailedError", () => saveState({ status: "failed" }).pipe(Effect.ignore)),
      Effect.onInterrupt(() => saveState({ status: "interrupted" }).pipe(Effect.ignore))
    )
    yield* saveState({ status: result.status })
    yield* reporter.line(
      result.status === "complete"
        ? `complete: the promise was accepted at iteration ${result.iterations}`
        : `stopped: --max-iterations (${options.maxIterations}) reached without the completion promise`
    )
    return result
  })

const prefixLines = (text: string, prefix: string) =>
  text.replace(/^(?=.)/gm, prefix)
