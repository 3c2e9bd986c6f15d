import { FileSystem } from "@effect/platform"
import { Clock, Data, Effect, Option, Ref, Schema } from "effect"
import { readTextFile } from "./AtomicFile.js"
import { ContextStore } from "./ContextStore.js"
import type { HarnessUsage, IterationOutcome, IterationRecord, LoopOptions, LoopState, LoopStatus } from "./Domain.js"
import { ErrorJournal } from "./ErrorJournal.js"
import { type GitSnapshot, GitSummary } from "./GitSummary.js"
import { addUsage, type Capture, makeCapture, runHarness } from "./HarnessCapture.js"
import { HarnessService } from "./HarnessService.js"
import { HistoryStore } from "./HistoryStore.js"
import { type JournalEntry, previousErrorsSection } from "./JournalEntry.js"
import { formatBanner, formatCommits, formatSummary } from "./LoopFormat.js"
import { LoopLock } from "./LoopLock.js"
import { LoopReporter } from "./LoopReporter.js"
import { PromptBuilder, type PromptSection, renderPrompt } from "./PromptBuilder.js"
import { StateError } from "./StateError.js"
import { currentTask, openTaskCount, parseTasks, taskSection } from "./Tasks.js"
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

export interface LoopRun {
  readonly change: Change
  readonly userPrompt: string
  readonly options: LoopOptions
  /** Where the agent works: the repository root. */
  readonly cwd: string
  /** This process, recorded in the state file. */
  readonly pid: number
  /** Applied to everything written to logs and the error journal. */
  readonly redact: (text: string) => string
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

const PREVIOUS_ERRORS = "Previous errors"

const describeFailure = (capture: Capture) =>
  capture.timedOut
    ? "it timed out"
    : capture.signal !== null
    ? `it was killed by ${capture.signal}`
    : capture.exitCode !== 0
    ? `exit code ${capture.exitCode}`
    : `the agent reported: ${capture.error}`

const compactStamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")

/**
 * Runs iterations until the promise is accepted or `maxIterations` have run, holding the change's
 * lock throughout.
 */
export const runLoop = (input: LoopRun) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const contexts = yield* ContextStore
    const history = yield* HistoryStore
    const journal = yield* ErrorJournal
    const git = yield* GitSummary
    const harness = yield* HarnessService
    const builder = yield* PromptBuilder
    const reporter = yield* LoopReporter
    const lock = yield* LoopLock
    const { change, options } = input
    const changeId = change.id

    const loopStartedAt = yield* Clock.currentTimeMillis
    const run = `${compactStamp(loopStartedAt)}-${Math.random().toString(36).slice(2, 6)}`
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

    let gitWarned = false
    const gitOrWarn = <A>(effect: Effect.Effect<A, { readonly message: string }>, fallback: A) =>
      Effect.catchAll(effect, (error) =>
        Effect.as(gitWarned ? Effect.void : Effect.zipRight(Effect.sync(() => (gitWarned = true)), reporter.warn(error.message)), fallback))

    const readDocument = (path: string) =>
      readTextFile(fs, path, { maxBytes: 8 * 1024 * 1024, hint: "split it, or move detail into other files" }).pipe(
        Effect.flatMap((text) =>
          text === null ? Effect.fail(new StateError({ reason: "Read", path, detail: "the file is missing" })) : Effect.succeed(text)
        )
      )
    // Tasks only steer the agent: a tasks.md that cannot be read is warned about once and treated as empty.
    let tasksWarned = false
    const readTasks = readTextFile(fs, change.tasksPath, { maxBytes: 4 * 1024 * 1024, hint: "it is ignored" }).pipe(
      Effect.catchAll((error) =>
        Effect.as(tasksWarned ? Effect.void : Effect.zipRight(Effect.sync(() => (tasksWarned = true)), reporter.warn(error.message)), null)
      ),
      Effect.map(parseTasks)
    )

    let runUsage: HarnessUsage | null = null
    const reportProgress = (iteration: number, usage: HarnessUsage | null) =>
      reporter.progress === undefined ? Effect.void : reporter.progress({ iteration, maxIterations: options.maxIterations, usage })

    const runErrors: Array<JournalEntry> = []
    /** What the next prompt must tell the agent about the last iteration (a claim set aside). */
    let loopNotes: Array<string> = []
    let nextBefore: GitSnapshot | null = null
    let earlierErrors: ReadonlyArray<JournalEntry> = []

    const promptSections = (tasks: ReturnType<typeof parseTasks>) =>
      Effect.gen(function*() {
        const sections: Array<PromptSection> = []
        if (loopNotes.length > 0) sections.push({ title: "Notes from the loop", body: loopNotes.map((note) => `- ${note}`).join("\n") })
        loopNotes = []
        const taskBody = taskSection(tasks)
        if (taskBody !== null) sections.push({ title: "Tasks", body: taskBody })
        const errors = previousErrorsSection([...earlierErrors, ...runErrors])
        if (errors !== null) sections.push({ title: PREVIOUS_ERRORS, body: errors })
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
        const tasks = yield* readTasks
        const task = currentTask(tasks)
        const promptInput = {
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
          sections: yield* promptSections(tasks)
        }
        const prompt = builder.build(promptInput)
        // An echo is recognised against the prompt without the agent's own earlier output, which
        // the journal quotes: a claim repeated after a failed run is a claim, not an echo.
        const echoReference = renderPrompt({
          ...promptInput,
          sections: promptInput.sections.filter((section) => section.title !== PREVIOUS_ERRORS)
        })

        const startedAt = yield* Clock.currentTimeMillis
        yield* saveState({ iteration })
        yield* reporter.line(formatBanner(iteration, options.maxIterations, startedAt - loopStartedAt))
        yield* reportProgress(iteration, runUsage)
        // The previous iteration's closing snapshot is this one's start: nothing but the agent changes
        // the work tree in between, and it saves a scan of the work tree per iteration.
        const before = nextBefore ?? (yield* gitOrWarn(git.snapshot, null))
        const capture = makeCapture(options.completionPromise, echoReference)
        let logPath = ""

        const finish = (interrupted: boolean) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            if (capture.limited !== null) capture.error ??= capture.limited.message
            const failed = capture.timedOut || capture.signal !== null || capture.exitCode !== 0 || capture.error !== null
            const judgement = capture.judge.judgement()
            // A failed run never completes the loop, whatever it claimed.
            let accepted = judgement.claimed && !failed && iteration >= options.minIterations
            const notes: Array<string> = []
            if (judgement.claimed && !failed && !accepted) {
              notes.push(`completion promise seen, but --min-iterations is ${options.minIterations}: going on`)
            }
            if (judgement.claimed && failed && !interrupted) {
              loopNotes.push(
                `In iteration ${iteration} you printed the completion promise, but the run failed (${describeFailure(capture)}), ` +
                  "so the claim was set aside. Fix the failure, check that everything passes, and only then claim completion again."
              )
            }
            if (accepted && !interrupted) {
              const open = openTaskCount(yield* readTasks)
              if (open > 0 && options.requireTasks) {
                accepted = false
                notes.push(`completion refused: tasks.md still has ${open} open task${open === 1 ? "" : "s"} (--require-tasks)`)
              } else if (open > 0) {
                capture.warnings.push(`the agent claims completion, but tasks.md still has ${open} open task${open === 1 ? "" : "s"}`)
              }
            }
            const outcome: IterationOutcome = interrupted
              ? "interrupted"
              : accepted
              ? "complete"
              : capture.timedOut
              ? "timeout"
              : failed
              ? "failed"
              : "continue"
            const change = interrupted ? null : yield* gitOrWarn(git.changesSince(before), null)
            nextBefore = change?.after ?? null
            const summary = change?.summary ?? null
            let commit: string | null = null
            if (options.commit && summary !== null && summary.changedFiles > 0) {
              commit = yield* git.commitAll(`spool ralph: ${changeId} iteration ${iteration}`).pipe(
                Effect.catchTag("GitError", (error) =>
                  Effect.as(Effect.sync(() => capture.warnings.push(`auto-commit failed: ${error.detail}`)), null))
              )
            }
            const record: IterationRecord = {
              run,
              iteration,
              startedAt: new Date(startedAt).toISOString(),
              durationMs: now - startedAt,
              exitCode: capture.exitCode,
              signal: capture.signal,
              completionDetected: judgement.claimed,
              promises: judgement.verdicts.map((verdict) => ({ ...verdict, text: input.redact(verdict.text) })),
              outcome,
              git: summary,
              commit,
              usage: capture.usage,
              error: capture.error,
              warnings: capture.warnings
            }
            if (!capture.displayAtLineStart) yield* reporter.write("\n")
            if (record.usage !== null) runUsage = addUsage(runUsage, record.usage)
            yield* history.append(changeId, record)
            // Every harness failure is journaled, even one whose promise was accepted.
            if (failed && !interrupted) {
              const entry: JournalEntry = {
                timestamp: new Date(now).toISOString(),
                run,
                iteration,
                exitCode: capture.exitCode,
                signal: capture.signal,
                timedOut: capture.timedOut,
                error: capture.error,
                taskId: task?.id ?? null,
                taskDescription: task?.description ?? null,
                stderr: input.redact(capture.stderr.text(logPath)),
                stdout: input.redact(capture.stdout.text(logPath))
              }
              yield* journal.append(changeId, entry)
              runErrors.push(entry)
            }
            yield* reporter.line(formatSummary(record))
            for (const warning of capture.warnings) yield* reporter.warn(warning)
            for (const note of notes) yield* reporter.line(note)
            return record
          })

        yield* Effect.scoped(
          Effect.gen(function*() {
            const log = yield* history.openLog(changeId, run, iteration)
            logPath = log.path
            yield* log.write(input.redact(`=== prompt (iteration ${iteration}) ===\n${prompt}\n=== output ===\n`))
            yield* runHarness({
              harness,
              request: { prompt, changeId, iteration, cwd: input.cwd },
              capture,
              log,
              reporter,
              stream: options.stream,
              inactivityTimeoutMs: options.inactivityTimeoutMs,
              redact: input.redact,
              onUsage: (usage) => reportProgress(iteration, addUsage(runUsage, usage))
            })
          })
        ).pipe(Effect.onInterrupt(() => finish(true).pipe(Effect.ignore)))
        const record = yield* finish(false)
        if (record.outcome === "failed" || record.outcome === "timeout") {
          return yield* new IterationFailure({ record })
        }
        return record
      })

    // Bad input stops the run before it writes anything: the agent must start, and everything an
    // iteration reads is read once here. Only then is the change locked and state written.
    yield* harness.preflight
    yield* contexts.load(changeId)
    yield* readDocument(change.proposalPath)
    if (change.modulePath !== null) yield* readDocument(change.modulePath)
    yield* readTasks
    const previousOwner = yield* lock.acquire(changeId)
    if (Option.isSome(previousOwner)) {
      yield* reporter.warn(
        `took over the lock of a loop that is no longer running (pid ${previousOwner.value.pid}, started ${previousOwner.value.startedAt})`
      )
    }

    // Earlier runs' failures are read once; this run's are kept as they are journaled.
    if (options.errorHistory > 0) {
      earlierErrors = (yield* journal.read(changeId).pipe(
        Effect.catchAll((error) => Effect.as(reporter.warn(`${error.message}; earlier errors are left out of the prompt`), []))
      )).slice(-options.errorHistory)
    }

    yield* saveState({})
    if (!git.repository) {
      yield* reporter.warn("not inside a git repository: iterations will not be summarized or committed")
    }

    const policy = failurePolicy(options.failFast)
    const loop = Effect.gen(function*() {
      for (let iteration = 1;; iteration++) {
        const record = yield* policy(runIteration(iteration))
        if (record.outcome === "complete") return { result: { run, status: "complete", iterations: iteration }, record } as const
        if (iteration >= options.maxIterations) {
          return { result: { run, status: "max-iterations", iterations: iteration }, record } as const
        }
      }
    })

    const { record: last, result } = yield* loop.pipe(
      Effect.tapError(() => saveState({ status: "failed" }).pipe(Effect.ignore)),
      Effect.onInterrupt(() => saveState({ status: "interrupted" }).pipe(Effect.ignore))
    )
    yield* saveState({ status: result.status })
    if (result.status === "complete") {
      yield* reporter.line(`complete: the promise was accepted at iteration ${result.iterations}`)
      const open = openTaskCount(yield* readTasks)
      if (!options.keepErrors && last.exitCode === 0 && open === 0) {
        const archived = yield* journal.archive(changeId, compactStamp(yield* Clock.currentTimeMillis))
        if (archived !== null) yield* reporter.line(`error journal archived to ${archived}; errors.md is now empty`)
      }
    } else {
      yield* reporter.line(`stopped: --max-iterations (${options.maxIterations}) reached without the completion promise`)
    }
    return result satisfies LoopResult
  }).pipe(Effect.scoped)
