import { Clock, Effect, Exit, Ref } from "effect"
import { ContextStore } from "../state/ContextStore.js"
import type { HarnessUsage, IterationOutcome, IterationRecord } from "../domain/Domain.js"
import { ErrorJournal } from "../state/ErrorJournal.js"
import { type GitSnapshot, GitSummary } from "../git/GitSummary.js"
import type { IterationFacts, SpendGuard } from "../guards/Guards.js"
import { type Capture, makeCapture, runHarness } from "../harness/HarnessCapture.js"
import { HarnessService } from "../harness/HarnessService.js"
import { HistoryStore } from "../state/HistoryStore.js"
import { type JournalEntry, previousErrorsSection } from "../state/JournalEntry.js"
import type { UsageLimit } from "../guards/LimitWait.js"
import type { LoopRequest } from "./LoopRequest.js"
import type { Verdict } from "../completion/CompletionRule.js"
import { oneLine } from "../text/Text.js"
import { formatBanner, formatCommits, formatSummary, SET_ASIDE } from "./LoopFormat.js"
import type { LoopInputs } from "./LoopInputs.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { PromptBuilder, type PromptSection } from "../prompt/PromptBuilder.js"
import type { StateError } from "../state/StateError.js"
import { currentTask, openTaskCount, type TaskList, taskSection } from "../prompt/Tasks.js"
import { checkFailure, checkResult, checksSection, journalCheck, rejectionNote, type Verification, verifyClaim } from "../verify/Verification.js"

const PREVIOUS_ERRORS = "Previous errors"

/** What every iteration of a run shares. */
export interface IterationContext {
  readonly input: LoopRequest
  readonly runId: string
  readonly loopStartedAt: number
  readonly inputs: LoopInputs
  /** The work tree as the last iteration left it (null: take a snapshot). */
  readonly lastSnapshot: Ref.Ref<GitSnapshot | null>
  /** Journal entries the prompt shows: earlier runs' last few, then this run's. */
  readonly journaled: Ref.Ref<ReadonlyArray<JournalEntry>>
  /** Paths that held uncommitted work when the loop started and no iteration has committed since. */
  readonly ownerWork: Ref.Ref<ReadonlySet<string>>
  /** Paths the loop changed whose commit failed: the next commit takes them too. */
  readonly uncommitted: Ref.Ref<ReadonlyArray<string>>
  readonly setIteration: (iteration: number) => Effect.Effect<void, StateError>
}

/** How the loop watches one iteration: told when it starts and of its usage as it is reported, and able to stop it. */
export interface IterationWatch {
  readonly onStart: Effect.Effect<void>
  readonly onUsage: (usage: HarnessUsage) => Effect.Effect<void>
  readonly stopWhen: Effect.Effect<SpendGuard>
}

export interface IterationResult {
  readonly record: IterationRecord
  readonly facts: IterationFacts
  /** The usage limit the agent hit, when the iteration is `limited`. */
  readonly limit: UsageLimit | null
  /** What the next prompt must tell the agent about this iteration (a claim set aside). */
  readonly notes: ReadonlyArray<string>
  /** The spend cap that stopped the agent, when one did. */
  readonly stoppedBy: SpendGuard | null
}

const describeFailure = (capture: Capture) =>
  capture.timedOut
    ? "it timed out"
    : capture.signal !== null
    ? `it was killed by ${capture.signal}`
    : capture.exitCode !== 0
    ? `exit code ${capture.exitCode}`
    : `the agent reported: ${capture.error}`

const OTHER_DOCUMENTS = "Other documents of the change"
const MAX_DOCUMENTS = 30

/** Names the change's other documents without quoting them: the agent reads what it needs. */
const documentsSection = (paths: ReadonlyArray<string>) =>
  [
    "Read these as well: a change's design and acceptance criteria (its spec deltas) are in them.",
    ...paths.slice(0, MAX_DOCUMENTS).map((path) => `- ${path}`),
    ...(paths.length > MAX_DOCUMENTS ? [`- and ${paths.length - MAX_DOCUMENTS} more under .spool/changes/`] : [])
  ].join("\n")

/** The loop's own files and the change's documents: never the owner's work the loop keeps apart. */
export const isSpoolPath = (path: string) => path === ".spool" || path.startsWith(".spool/")

/** What the next prompt tells the agent about a promise that was not taken as a claim. */
const ignoredPromiseNote = (iteration: number, verdict: Verdict, token: string) =>
  `In iteration ${iteration} your completion promise was not accepted: "${oneLine(verdict.text, 160)}" (${verdict.reason}). ` +
  `When, and only when, everything is done, print <promise>${token}</promise> alone on its own line, ` +
  "after a sentence that says the work is complete; a promise inside a sentence, deferred, quoted or in code is not a claim."

const completeTasks = (tasks: TaskList) => tasks.tasks.filter((task) => task.status === "complete").length
const lastLine = (text: string) => text.split("\n").map((line) => line.trim()).filter((line) => line !== "").at(-1) ?? null

const outcomeOf = (capture: Capture, state: { interrupted: boolean; failed: boolean; accepted: boolean }): IterationOutcome =>
  state.interrupted
    ? "interrupted"
    : capture.stopped !== null
    ? "stopped"
    : capture.limited !== null
    ? "limited"
    : state.accepted
    ? "complete"
    : capture.timedOut
    ? "timeout"
    : state.failed
    ? "failed"
    : "continue"

/**
 * Commits what the iteration changed, and only that (with what an earlier failed commit left):
 * the owner's uncommitted work stays out, unless the agent edited the same file, which is then
 * committed whole with a warning naming it.
 */
const commitWork = (ctx: IterationContext, iteration: number, paths: ReadonlyArray<string>, warnings: Array<string>) =>
  Effect.gen(function*() {
    const git = yield* GitSummary
    const pending = yield* Ref.get(ctx.uncommitted)
    const all = pending.length === 0 ? paths : [...new Set([...pending, ...paths])]
    if (all.length === 0) return null
    const made = yield* Effect.either(git.commit(`spool ralph: ${ctx.input.change.id} iteration ${iteration}`, all))
    if (made._tag === "Left") {
      warnings.push(`auto-commit failed: ${made.left.detail}`)
      yield* Ref.set(ctx.uncommitted, all)
      return null
    }
    yield* Ref.set(ctx.uncommitted, [])
    if (made.right !== null) {
      const owners = yield* Ref.get(ctx.ownerWork)
      const mixed = all.filter((path) => owners.has(path))
      if (mixed.length > 0) {
        const shown = mixed.filter((path) => !isSpoolPath(path))
        if (shown.length > 0) {
          warnings.push(
            `committed ${listPaths(shown)} with iteration ${iteration}: the agent edited ${shown.length === 1 ? "a file" : "files"} ` +
              "that already held uncommitted changes from before the loop started, so those changes are in this commit too"
          )
        }
        const committed = new Set(all)
        yield* Ref.set(ctx.ownerWork, new Set([...owners].filter((path) => !committed.has(path))))
      }
    }
    return made.right
  })

/** `a.ts, b.ts and 3 more`. */
export const listPaths = (paths: ReadonlyArray<string>, shown = 5) =>
  paths.length <= shown ? paths.join(", ") : `${paths.slice(0, shown).join(", ")} and ${paths.length - shown} more`

/**
 * One iteration: builds the prompt, runs the agent under `watch`, then records, journals,
 * summarises and commits what it did, even when it was interrupted or stopped.
 */
export const runIteration = (ctx: IterationContext, iteration: number, notesIn: ReadonlyArray<string>, watch: IterationWatch) =>
  Effect.gen(function*() {
    const contexts = yield* ContextStore
    const history = yield* HistoryStore
    const journal = yield* ErrorJournal
    const git = yield* GitSummary
    const harness = yield* HarnessService
    const builder = yield* PromptBuilder
    const reporter = yield* LoopReporter
    const { change, options } = ctx.input
    const { inputs } = ctx

    // Reloaded every iteration, so context added from another terminal shows up at the next one.
    const context = yield* contexts.load(change.id)
    const proposal = yield* inputs.readDocument(change.proposalPath)
    const module = change.modulePath === null ? null : yield* inputs.readDocument(change.modulePath)
    const tasks = yield* inputs.readTasks
    const task = currentTask(tasks)
    const sections: Array<PromptSection> = []
    if (notesIn.length > 0) sections.push({ title: "Notes from the loop", body: notesIn.map((note) => `- ${note}`).join("\n") })
    if (options.verify.length > 0) sections.push(checksSection(options.verify))
    const taskBody = taskSection(tasks)
    if (taskBody !== null) sections.push({ title: "Tasks", body: taskBody })
    const documents = yield* inputs.otherDocuments
    if (documents.length > 0) sections.push({ title: OTHER_DOCUMENTS, body: documentsSection(documents) })
    const errors = previousErrorsSection(yield* Ref.get(ctx.journaled))
    if (errors !== null) sections.push({ title: PREVIOUS_ERRORS, body: errors })
    if (options.historyCount > 0 && git.repository) {
      const commits = yield* inputs.gitOrWarn(git.recentCommits({ count: options.historyCount, includeMerges: options.includeMerges }), [])
      if (commits.length > 0) sections.push({ title: "Recent commits", body: formatCommits(commits) })
    }
    const promptInput = {
      iteration,
      minIterations: options.minIterations,
      maxIterations: options.maxIterations,
      completionPromise: options.completionPromise,
      context,
      changeId: change.id,
      moduleId: change.moduleId,
      userPrompt: ctx.input.userPrompt,
      proposal,
      module,
      sections
    }
    const prompt = builder.build(promptInput)
    // An echo is recognised against the prompt without the agent's own earlier output, which the
    // journal quotes: a claim repeated after a failed run is a claim, not an echo. The same builder
    // renders it, so that it reads as the prompt the agent was sent.
    const echoReference = sections.some((s) => s.title === PREVIOUS_ERRORS)
      ? builder.build({ ...promptInput, sections: sections.filter((s) => s.title !== PREVIOUS_ERRORS) })
      : prompt

    const startedAt = yield* Clock.currentTimeMillis
    yield* ctx.setIteration(iteration)
    yield* reporter.line(formatBanner(iteration, options.maxIterations, startedAt - ctx.loopStartedAt))
    yield* watch.onStart
    // The previous iteration's closing snapshot is this one's start: nothing but the agent changes
    // the work tree in between, and it saves a scan of the work tree per iteration.
    const before = (yield* Ref.get(ctx.lastSnapshot)) ?? (yield* inputs.gitOrWarn(git.snapshot, null))
    const capture = makeCapture(options.completionPromise, echoReference)
    // Stryker disable next-line StringLiteral: the log opens before the agent runs; a run cut short before that is never journaled, so its log path is never read
    let logPath = ""

    // Only the checks of a claim can be interrupted once the agent is done: the iteration is then recorded as interrupted.
    const finish = (interrupted: boolean) =>
      Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const cut = interrupted || capture.stopped !== null || capture.limited !== null
        const failed = !cut && (capture.timedOut || capture.signal !== null || capture.exitCode !== 0 || capture.error !== null)
        const judgement = capture.judge.judgement()
        // A failed, stopped or limited run never completes the loop, whatever it claimed: its claim
        // is recorded as set aside, not as a claim.
        const claimed = judgement.claimed && !failed && !cut
        const verdicts = claimed || !judgement.claimed
          ? judgement.verdicts
          : judgement.verdicts.map((v) => (v.accepted ? { ...v, accepted: false, reason: failed ? SET_ASIDE.failed : SET_ASIDE.cut } : v))
        let accepted = claimed && iteration >= options.minIterations
        const lines: Array<string> = []
        const notes: Array<string> = []
        if (claimed && !accepted) {
          lines.push(`completion promise seen, but --min-iterations is ${options.minIterations}: going on`)
        }
        if (judgement.claimed && failed) {
          notes.push(
            `In iteration ${iteration} you printed the completion promise, but the run failed (${describeFailure(capture)}), ` +
              "so the claim was set aside. Fix the failure, check that everything passes, and only then claim completion again."
          )
        }
        if (!judgement.claimed && verdicts.length > 0) {
          notes.push(ignoredPromiseNote(iteration, verdicts[0]!, options.completionPromise))
        }
        const tasksAfter = interrupted ? tasks : yield* inputs.readTasks
        if (accepted) {
          const open = openTaskCount(tasksAfter)
          if (open > 0 && options.requireTasks) {
            accepted = false
            const refusal = `tasks.md still has ${open} open task${open === 1 ? "" : "s"}`
            lines.push(`completion refused: ${refusal} (--require-tasks)`)
            const first = currentTask(tasksAfter)
            notes.push(
              `In iteration ${iteration} your completion claim was refused: ${refusal}` +
                `${first === null ? "" : ` (the first: ${first.id} ${first.description})`}. ` +
                "Finish them, or mark them done or shelved in tasks.md, before you claim completion."
            )
          } else if (open > 0) {
            capture.warnings.push(`the agent claims completion, but tasks.md still has ${open} open task${open === 1 ? "" : "s"}`)
          }
        }
        // The agent's work is measured and committed before any check runs: what a check writes
        // (coverage, build output) is not the iteration's work, nor the next one's.
        const changed = interrupted ? null : yield* inputs.gitOrWarn(git.changesSince(before), null)
        yield* Ref.set(ctx.lastSnapshot, changed?.after ?? null)
        const summary = changed?.summary ?? null
        let commit: string | null = null
        if (options.commit && changed !== null) {
          commit = yield* commitWork(ctx, iteration, changed.paths, capture.warnings)
        }
        // A claim that would stand is checked by the project's own checks (--verify), and stands only if they pass.
        let verification: Verification | null = null
        let checkInterrupted = false
        if (accepted && options.verify.length > 0) {
          if (!capture.displayAtLineStart) yield* reporter.write("\n")
          capture.displayAtLineStart = true
          // Ctrl-C may stop a check (and only that, in here): the iteration is then recorded as interrupted, its commit kept.
          const checked = yield* Effect.exit(restore(verifyClaim(options.verify, {
            cwd: ctx.input.cwd,
            timeoutMs: options.verifyTimeoutMs,
            env: { SPOOL_CHANGE: change.id, SPOOL_ITERATION: String(iteration) }
          })))
          if (Exit.isSuccess(checked)) verification = checked.value
          else if (Exit.isInterrupted(checked)) checkInterrupted = true
          else return yield* Effect.failCause(checked.cause)
          if (changed !== null) yield* Ref.set(ctx.lastSnapshot, yield* inputs.gitOrWarn(git.snapshot, null))
        }
        const rejectedBy = verification?.failed ?? null
        if (rejectedBy !== null) {
          accepted = false
          notes.push(rejectionNote(iteration, options.verify, rejectedBy))
        }
        const outcome = outcomeOf(capture, { interrupted: interrupted || checkInterrupted, failed: failed || rejectedBy !== null, accepted })
        // What the agent reported may quote secrets, like its output: redacted once, used everywhere.
        const redact = ctx.input.redact
        const error = capture.error === null ? null : redact(capture.error)
        const record: IterationRecord = {
          run: ctx.runId,
          iteration,
          startedAt: new Date(startedAt).toISOString(),
          durationMs: now - startedAt,
          exitCode: capture.exitCode,
          signal: capture.signal,
          completionDetected: claimed,
          promises: verdicts.map((verdict) => ({ ...verdict, text: redact(verdict.text) })),
          outcome,
          git: summary,
          commit,
          usage: capture.usage,
          error: outcome === "limited" ? (capture.limited === null ? null : redact(capture.limited.message)) : error,
          warnings: capture.warnings.map(redact),
          ...(verification === null ? {} : { verify: verification.results.map(checkResult) })
        }
        if (!capture.displayAtLineStart) yield* reporter.write("\n")
        yield* history.append(change.id, record)
        const stderr = redact(capture.stderr.text(logPath))
        if (failed || rejectedBy !== null) {
          const entry: JournalEntry = {
            timestamp: new Date(now).toISOString(),
            run: ctx.runId,
            iteration,
            exitCode: capture.exitCode,
            signal: capture.signal,
            timedOut: capture.timedOut,
            error,
            taskId: task?.id ?? null,
            taskDescription: task?.description ?? null,
            // A rejected claim's failure is the check's: its output, not the agent's.
            stderr: rejectedBy === null ? stderr : "",
            stdout: rejectedBy === null ? redact(capture.stdout.text(logPath)) : "",
            check: rejectedBy === null ? null : journalCheck(rejectedBy, redact)
          }
          yield* journal.append(change.id, entry)
          yield* Ref.update(ctx.journaled, (entries) => [...entries, entry])
        }
        yield* reporter.line(formatSummary(record))
        for (const warning of record.warnings) yield* reporter.warn(warning)
        for (const line of lines) yield* reporter.line(line)
        const tasksTicked = completeTasks(tasksAfter) > completeTasks(tasks)
        const progress = judgement.claimed || tasksTicked || commit !== null ? true : summary === null ? null : summary.changedFiles > 0
        const facts: IterationFacts = {
          outcome,
          progress,
          failure: failed ? error ?? lastLine(stderr) : rejectedBy !== null ? checkFailure(rejectedBy) : null
        }
        if (checkInterrupted) return yield* Effect.interrupt
        return { record, facts, limit: capture.limited, notes, stoppedBy: capture.stopped as SpendGuard | null } satisfies IterationResult
      }))

    yield* Effect.scoped(
      Effect.gen(function*() {
        const log = yield* history.openLog(change.id, ctx.runId, iteration)
        logPath = log.path
        yield* log.write(ctx.input.redact(`=== prompt (iteration ${iteration}) ===\n${prompt}\n=== output ===\n`))
        yield* runHarness({
          harness,
          request: { prompt, changeId: change.id, iteration, cwd: ctx.input.cwd },
          capture,
          log,
          reporter,
          stream: options.stream,
          inactivityTimeoutMs: options.inactivityTimeoutMs,
          redact: ctx.input.redact,
          onUsage: watch.onUsage,
          stopWhen: watch.stopWhen
        })
      })
    ).pipe(Effect.onInterrupt(() => finish(true).pipe(Effect.ignore)))
    // Uninterruptible but for its checks, which record the interruption themselves: one record, whatever happens.
    return yield* finish(false)
  })
