import { Clock, Effect, Option, Random, Ref } from "effect"
import type { LoopAgents } from "../agents/LoopAgents.js"
import type { AgentNote, HarnessUsage, LoopState } from "../domain/Domain.js"
import type { GitSnapshot } from "../git/GitSummary.js"
import { type GuardCounters, guardReport, initialCounters } from "../guards/Guards.js"
import type { LimitGate } from "../guards/UsageLimitGate.js"
import { LoopEvent, LoopEvents } from "../live/LoopEvents.js"
import { LoopReporter } from "../output/LoopReporter.js"
import { Checkpoint } from "../remote/Checkpoint.js"
import type { RemoteError } from "../remote/RemoteHome.js"
import { ErrorJournal } from "../state/ErrorJournal.js"
import { HistoryStore } from "../state/HistoryStore.js"
import type { JournalEntry } from "../state/JournalEntry.js"
import type { LockLostError } from "../state/LoopLock.js"
import type { StateError } from "../state/StateError.js"
import type { IterationContext } from "./Iteration.js"
import type { LoopInputs } from "./LoopInputs.js"
import type { LoopRequest } from "./LoopRequest.js"
import type { ResumePlan } from "./Resume.js"

/** What the steps of one run share: its name, its clocks and counters, and how it saves its state. */
export interface LoopRun {
  readonly input: LoopRequest
  readonly runId: string
  /** The first iteration of this sitting: 1, or one after the last a resumed run recorded. */
  readonly firstIteration: number
  /** When the run would have started had it never paused: its time so far counts toward --max-duration. */
  readonly loopStartedAt: number
  /** With --max-duration: when the run's time is up (epoch ms); null without one. */
  readonly maxDurationEnd: number | null
  /** With --deadline: when the run must have ended (epoch ms); null without one. */
  readonly deadlineAt: number | null
  /** The run's time so far, its earlier sittings included. */
  readonly elapsed: Effect.Effect<number>
  readonly counters: Ref.Ref<GuardCounters>
  /** How long the run's iterations took, which say whether another fits before --deadline. */
  readonly durations: Ref.Ref<ReadonlyArray<number>>
  /** Everything the harness reported this run, for reporters with a live status line. */
  readonly runUsage: Ref.Ref<HarnessUsage | null>
  readonly saveState: (patch: Partial<LoopState>) => Effect.Effect<void, StateError>
  readonly iterations: IterationContext
  readonly gate: LimitGate
  readonly inputs: LoopInputs
  /** Keeps the work and state beyond this machine (with --remote, a push), where a checkpoint is given. */
  readonly checkpoint: Effect.Effect<void, LockLostError | RemoteError>
  /** The agents the run takes, the loop's own first. */
  readonly agents: LoopAgents["Type"]
  /** What each agent ran and spent in the run, and its limit, in the list's order. */
  readonly agentNotes: Ref.Ref<ReadonlyArray<AgentNote>>
  /** The index of the agent that ran the last iteration; null before the first. */
  readonly lastAgent: Ref.Ref<number | null>
  /** Claims the reviewers turned down in the run (`--max-reviews` counts them), earlier sittings' included. */
  readonly reviewRejections: Ref.Ref<number>
}

/** Each agent's note as the run starts: a resumed run's carried over, else none run yet; a limit still holding is kept. */
const firstNotes = (agents: LoopAgents["Type"]["agents"], last: LoopState | null, now: number) =>
  agents.map((agent): AgentNote => {
    const before = last?.agents?.find((note) => note.agent === agent.id)
    const holding = before?.limitedUntil != null && Date.parse(before.limitedUntil) > now ? before.limitedUntil : null
    return before !== undefined
      ? { ...before, harness: agent.harness, model: agent.model, limitedUntil: holding }
      : { agent: agent.id, harness: agent.harness, model: agent.model, iterations: 0, costUsd: null, tokens: 0, limitedUntil: holding }
  })

export const compactStamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")

/** A run's name: its start time and a short tag from `Random`, `20261101T100000Z-k3f9`. */
const makeRunId = (startedAt: number) =>
  Effect.map(Random.nextIntBetween(0, 36 ** 4), (tag) => `${compactStamp(startedAt)}-${tag.toString(36).padStart(4, "0")}`)

/** The checkpoint of the change, where one is given. */
export const checkpointOf = (input: LoopRequest) =>
  Effect.map(Effect.serviceOption(Checkpoint), (kept) =>
    Option.match(kept, {
      onNone: (): Effect.Effect<void, LockLostError | RemoteError> => Effect.void,
      onSome: (checkpoint) => checkpoint.save(input.change.id)
    }))

/**
 * The run this sitting starts or goes on with (`resumed`): its name, its clocks and counters,
 * its state as first written, and what its iterations share.
 */
export const makeLoopRun = (
  input: LoopRequest,
  resumed: Extract<ResumePlan, { _tag: "Continue" }> | null,
  parts: {
    readonly gate: LimitGate
    readonly inputs: LoopInputs
    readonly checkpoint: LoopRun["checkpoint"]
    readonly agents: LoopAgents["Type"]
    /** With `--resume`: the state of the run it goes on with; else null (a new run). */
    readonly last: LoopState | null
  }
) =>
  Effect.gen(function*() {
    const history = yield* HistoryStore
    const journal = yield* ErrorJournal
    const { agents, last } = parts
    const reporter = yield* LoopReporter
    const events = yield* LoopEvents
    const { change, options } = input
    const sittingStartedAt = yield* Clock.currentTimeMillis
    const runId = resumed?.run ?? (yield* makeRunId(sittingStartedAt))
    const firstIteration = resumed?.iteration ?? 1
    const loopStartedAt = sittingStartedAt - (resumed?.elapsedMs ?? 0)
    const maxDurationEnd = options.maxDurationMs === null ? null : loopStartedAt + options.maxDurationMs
    const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - loopStartedAt)
    const counters = yield* Ref.make(resumed?.counters ?? initialCounters)
    const deadlineAt = input.deadline ?? null
    const durations = yield* Ref.make<ReadonlyArray<number>>(
      resumed === null || deadlineAt === null
        ? []
        : (yield* history.recent(change.id, 50)).records.filter((r) => r.run === resumed.run).map((r) => r.durationMs)
    )
    const runUsage = yield* Ref.make<HarnessUsage | null>(null)
    const reviewRejections = yield* Ref.make(
      resumed === null ? 0 : (yield* history.recent(change.id, 200)).records.filter((r) => r.run === resumed.run && r.outcome === "changes").length
    )
    const notes = firstNotes(agents.agents, last, sittingStartedAt)
    const agentNotes = yield* Ref.make<ReadonlyArray<AgentNote>>(notes)
    const lastIndex = agents.agents.findIndex((agent) => agent.id === last?.agent)
    const lastAgent = yield* Ref.make<number | null>(lastIndex < 0 ? null : lastIndex)
    const state = yield* Ref.make<LoopState>({
      changeId: change.id,
      ...(input.worktree == null ? {} : { branch: input.worktree.branch, worktree: input.worktree.root }),
      run: runId,
      status: "running",
      iteration: firstIteration - 1,
      minIterations: options.minIterations,
      maxIterations: options.maxIterations,
      startedAt: resumed?.startedAt ?? new Date(sittingStartedAt).toISOString(),
      updatedAt: new Date(sittingStartedAt).toISOString(),
      pid: input.pid,
      harness: agents.agents[0].harness,
      ...(last?.agent === undefined ? {} : { agent: last.agent }),
      agents: notes,
      stopReason: null,
      stopMessage: null,
      resumeAt: null,
      guards: guardReport(options, resumed?.counters ?? initialCounters),
      ...(input.settings === undefined ? {} : { settings: input.settings }),
      ...(input.sandbox === undefined ? {} : { sandbox: input.sandbox })
    })
    const saveState = (patch: Partial<LoopState>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const counted = yield* Ref.get(counters)
        const agentsNow = yield* Ref.get(agentNotes)
        const next = yield* Ref.updateAndGet(state, (s) => ({
          ...s,
          ...patch,
          agents: agentsNow,
          guards: guardReport(options, counted),
          elapsedMs: now - loopStartedAt,
          failureStreak: counted.failureFingerprints,
          updatedAt: new Date(now).toISOString()
        }))
        // Published before it is written: those who follow the loop learn of its end even when the file cannot say it.
        yield* events.publish(LoopEvent.StateChanged({ changeId: change.id, state: next }))
        yield* history.writeState(change.id, next)
      })

    // Earlier runs' failures are read once; this run's are added as they are journaled.
    const earlierErrors: ReadonlyArray<JournalEntry> = options.errorHistory === 0 ? [] : (yield* journal.read(change.id).pipe(
      Effect.catchAll((error) => Effect.as(reporter.warn(`${error.message}; earlier errors are left out of the prompt`), []))
    )).slice(-options.errorHistory)
    const iterations: IterationContext = {
      input,
      runId,
      loopStartedAt,
      inputs: parts.inputs,
      runStart: yield* Ref.make<GitSnapshot | null>(null),
      lastSnapshot: yield* Ref.make<GitSnapshot | null>(null),
      journaled: yield* Ref.make(earlierErrors),
      ownerWork: yield* Ref.make<ReadonlySet<string>>(new Set()),
      uncommitted: yield* Ref.make<ReadonlyArray<string>>([]),
      setIteration: (iteration) => saveState({ iteration })
    }
    return {
      input,
      runId,
      firstIteration,
      loopStartedAt,
      maxDurationEnd,
      deadlineAt,
      elapsed,
      counters,
      durations,
      runUsage,
      saveState,
      iterations,
      gate: parts.gate,
      inputs: parts.inputs,
      checkpoint: parts.checkpoint,
      agents,
      agentNotes,
      lastAgent,
      reviewRejections
    } satisfies LoopRun
  })
