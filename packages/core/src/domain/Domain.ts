import { Schema } from "effect"
import { CheckResult } from "./CheckResult.js"

/** A change directory name under `.spool/changes/` (`002-01_add-ralph-loop`). One safe path segment. */
export const ChangeId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]*$/),
  Schema.filter((s) => !s.includes(".."), { message: () => "must not contain '..'" }),
  Schema.brand("ChangeId")
)
export type ChangeId = typeof ChangeId.Type

/** The numeric module id a change belongs to (`002`). */
export const ModuleId = Schema.String.pipe(Schema.pattern(/^\d+$/), Schema.brand("ModuleId"))
export type ModuleId = typeof ModuleId.Type

/** `002-01_add-ralph-loop` -> `002`; ids without a numeric prefix have no module. */
export const moduleIdOf = (changeId: string): ModuleId | null => {
  const match = /^(\d+)-/.exec(changeId)
  return match ? ModuleId.make(match[1]!) : null
}

export const GitChangeSummary = Schema.Struct({
  changedFiles: Schema.Number,
  files: Schema.Array(Schema.String),
  insertions: Schema.Number,
  deletions: Schema.Number
})
export type GitChangeSummary = typeof GitChangeSummary.Type

export const HarnessUsage = Schema.Struct({
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  reasoningTokens: Schema.Number,
  cacheReadTokens: Schema.Number,
  cacheWriteTokens: Schema.Number,
  /** US dollars; null when the agent does not report cost (it is unknown, not zero). */
  cost: Schema.NullOr(Schema.Number)
})
export type HarnessUsage = typeof HarnessUsage.Type

/** The tokens a usage counts toward `--max-tokens` and `--status`: input, output and reasoning (cache reads and writes are not). */
export const countTokens = (usage: HarnessUsage) => usage.inputTokens + usage.outputTokens + usage.reasoningTokens

/**
 * How an iteration ended:
 * - `complete`: the promise was accepted and the loop stops
 * - `continue`: the harness exited 0 and the loop goes on (promise absent, or before --min-iterations)
 * - `failed`: the harness exited non-zero or was killed by a signal
 * - `timeout`: the harness was silent past --inactivity-timeout and was killed
 * - `interrupted`: the user stopped the loop during the iteration
 * - `stopped`: a guard (a spend cap) stopped the agent during the iteration
 * - `limited`: the agent hit a usage limit; the same iteration runs again once it lifts
 * - `changes`: the claim passed the checks, but a reviewer (`--review`) did not approve it; the loop goes on
 */
export const IterationOutcome = Schema.Literal("complete", "continue", "failed", "timeout", "interrupted", "stopped", "limited", "changes")
export type IterationOutcome = typeof IterationOutcome.Type

/**
 * What one reviewer (`--review`) made of a claim: `approve`; `changes` asked for (its findings);
 * `none`: it gave no verdict that stands; `failed`: it failed, timed out or was stopped (the
 * reason); `limited`: it met a usage limit before it gave one.
 */
export const ReviewVerdict = Schema.Literal("approve", "changes", "none", "failed", "limited")
export type ReviewVerdict = typeof ReviewVerdict.Type

export const ReviewRecord = Schema.Struct({
  /** The reviewer as `--review` names it (`claude`, `codex:gpt-5.5`, `command:./review.sh`). */
  reviewer: Schema.String,
  verdict: ReviewVerdict,
  /** Why it is not an approval (what must change, or what went wrong); null for an approval. */
  findings: Schema.NullOr(Schema.String),
  durationMs: Schema.Number,
  usage: Schema.NullOr(HarnessUsage)
})
export type ReviewRecord = typeof ReviewRecord.Type

/** How one occurrence of the promise in the agent's text was judged. */
export const PromiseVerdict = Schema.Struct({
  accepted: Schema.Boolean,
  reason: Schema.String,
  text: Schema.String
})
export type PromiseVerdict = typeof PromiseVerdict.Type

export const IterationRecord = Schema.Struct({
  run: Schema.String,
  iteration: Schema.Int,
  startedAt: Schema.String,
  durationMs: Schema.Number,
  exitCode: Schema.NullOr(Schema.Int),
  signal: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /** The agent claimed completion (one occurrence of the promise stood as its statement). */
  completionDetected: Schema.Boolean,
  /** Every occurrence of the promise tag and how it was judged (the first 20). */
  promises: Schema.optionalWith(Schema.Array(PromiseVerdict), { default: () => [] }),
  outcome: IterationOutcome,
  git: Schema.NullOr(GitChangeSummary),
  commit: Schema.NullOr(Schema.String),
  usage: Schema.optionalWith(Schema.NullOr(HarnessUsage), { default: () => null }),
  /** What the agent reported when its run failed (an API error), if it said anything. */
  error: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  warnings: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /** The `--verify` checks run on the iteration's claim, in order, up to the first that failed. */
  verify: Schema.optionalWith(Schema.Array(CheckResult), { exact: true }),
  /** Its agent and checks ran in the sandbox (`--sandbox`); absent: they did not. */
  sandboxed: Schema.optionalWith(Schema.Literal(true), { exact: true }),
  /** The agent that ran it, as the loop's list names it (`claude`, `codex:gpt-5.5`); absent in records written before it was kept. */
  agent: Schema.optionalWith(Schema.String, { exact: true }),
  /** Its harness (`claude`, `command`, ...) and the model asked for (null: the harness's own). */
  harness: Schema.optionalWith(Schema.String, { exact: true }),
  model: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  /** The reviews of its claim (`--review`), once the checks passed; absent: none ran. */
  reviews: Schema.optionalWith(Schema.Array(ReviewRecord), { exact: true })
})
export type IterationRecord = typeof IterationRecord.Type

/**
 * Where a run stands: `running`, `waiting` (for a usage limit to lift, until `resumeAt`), or how it
 * ended: `complete`, `failed` (failures or a fatal error), `max-iterations`, `stopped` (a guard),
 * `usage-limit` (a limit not waited out), `interrupted`, `deadline`, `review-rejected` (reviewers turned the
 * claim down `--max-reviews` times).
 */
export const LoopStatus = Schema.Literal(
  "running",
  "waiting",
  "complete",
  "failed",
  "max-iterations",
  "stopped",
  "usage-limit",
  "interrupted",
  "deadline",
  "review-rejected"
)
export type LoopStatus = typeof LoopStatus.Type

/** Why a run ended; `error` is a fatal error (the harness cannot start, state cannot be written). */
export const StopReason = Schema.Literal(
  "complete",
  "max-iterations",
  "max-cost",
  "max-tokens",
  "max-duration",
  "stall",
  "failures",
  "usage-limit",
  "interrupted",
  "error",
  "deadline",
  "review-rejected"
)
export type StopReason = typeof StopReason.Type

/** The guards of a run and their counters, as `--status` shows them. Caps are null when not set. */
export const GuardReport = Schema.Struct({
  maxCostUsd: Schema.NullOr(Schema.Number),
  maxTokens: Schema.NullOr(Schema.Number),
  maxDurationMs: Schema.NullOr(Schema.Number),
  stallIterations: Schema.Int,
  maxConsecutiveFailures: Schema.Int,
  maxLimitWaitMs: Schema.Number,
  /** Spent in this run so far; cost is null while the harness has reported none. */
  costUsd: Schema.NullOr(Schema.Number),
  tokens: Schema.Number,
  /** Iterations in a row without progress, and failed iterations in a row. */
  stalledIterations: Schema.Int,
  consecutiveFailures: Schema.Int
})
export type GuardReport = typeof GuardReport.Type

/** Where a run's settings came from: the options the settings file gave, and those given on the command line. */
export const SettingsSource = Schema.Struct({
  /** The settings file, relative to the repository root; null when there is none. */
  file: Schema.NullOr(Schema.String),
  fromFile: Schema.Array(Schema.String),
  fromCommandLine: Schema.Array(Schema.String)
})
export type SettingsSource = typeof SettingsSource.Type

/**
 * What became of bringing a completed change home (`--merge`), in words (`merged into main
 * (1a2b3c4d)`, `not merged: conflict in src/app.ts`), and whether the work is home.
 */
export const MergeNote = Schema.Struct({
  merged: Schema.Boolean,
  text: Schema.String
})
export type MergeNote = typeof MergeNote.Type

/**
 * A person's word on a change completed in a `--merge --approve` sweep, before its merge: awaited,
 * given (the next `--merge` sweep merges it), or refused, with why (the next sweep runs it again).
 * `run`: the run it is about; a word on an earlier run says nothing of a later one.
 */
export const ApprovalNote = Schema.Struct({
  decision: Schema.Literal("awaiting", "approved", "rejected"),
  run: Schema.String,
  at: Schema.String,
  why: Schema.optionalWith(Schema.String, { exact: true })
})
export type ApprovalNote = typeof ApprovalNote.Type

/** A run in the sandbox (`--sandbox`): its runtime, the hosts its agent may reach, and the person's additions to its walls. */
export const SandboxNote = Schema.Struct({
  runtime: Schema.String,
  hosts: Schema.Array(Schema.String),
  denyRead: Schema.Array(Schema.String),
  passEnv: Schema.Array(Schema.String)
})
export type SandboxNote = typeof SandboxNote.Type

/**
 * One agent of a run's list (the loop's agent, then its fallbacks): what it ran and spent in the
 * run, and until when a usage limit it met holds it (null: none known).
 */
export const AgentNote = Schema.Struct({
  agent: Schema.String,
  harness: Schema.String,
  model: Schema.NullOr(Schema.String),
  iterations: Schema.Int,
  /** US dollars; null while it has reported none. */
  costUsd: Schema.NullOr(Schema.Number),
  tokens: Schema.Number,
  limitedUntil: Schema.NullOr(Schema.String)
})
export type AgentNote = typeof AgentNote.Type

/** The small state file of the current (or last) run of a change. */
export const LoopState = Schema.Struct({
  changeId: Schema.String,
  /** With `--worktree`: the branch the run commits to and the worktree the agent works in. */
  branch: Schema.optionalWith(Schema.String, { exact: true }),
  worktree: Schema.optionalWith(Schema.String, { exact: true }),
  run: Schema.String,
  status: LoopStatus,
  iteration: Schema.Int,
  minIterations: Schema.Int,
  maxIterations: Schema.Int,
  startedAt: Schema.String,
  updatedAt: Schema.String,
  pid: Schema.Int,
  /** The harness the run drives (`claude`, `command`, ...), so that its log reads as it showed; absent in state written before it was kept. */
  harness: Schema.optionalWith(Schema.String, { exact: true }),
  /** The agent of the current (or last) iteration, as `agents` names it; absent before the first. */
  agent: Schema.optionalWith(Schema.String, { exact: true }),
  /** Every agent of the run's list, in order (the loop's own first); absent in state written before they were kept. */
  agents: Schema.optionalWith(Schema.Array(AgentNote), { exact: true }),
  /** Why the run ended; null while it runs (and in state written before it was recorded). */
  stopReason: Schema.optionalWith(Schema.NullOr(StopReason), { default: () => null }),
  /** The line that said why, naming the guard and the totals. */
  stopMessage: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /** While waiting for a usage limit, when the loop resumes; after a limit not waited out, when it would have. */
  resumeAt: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  guards: Schema.optionalWith(Schema.NullOr(GuardReport), { default: () => null }),
  /** The run's time so far, over every sitting of it (`--resume` goes on from it); absent in state written before it was kept. */
  elapsedMs: Schema.optionalWith(Schema.Number, { exact: true }),
  /** The fingerprint of each failure of the current streak, newest last, so that a resumed run goes on counting it. */
  failureStreak: Schema.optionalWith(Schema.Array(Schema.NullOr(Schema.String)), { exact: true }),
  /** Where the run's settings came from (the settings file, the command line). */
  settings: Schema.optionalWith(SettingsSource, { exact: true }),
  /** The run's agent and checks ran in the sandbox, so walled; absent: they did not. */
  sandbox: Schema.optionalWith(SandboxNote, { exact: true }),
  /** A run completed in a `--merge` sweep: what became of its merge (not merged until it is made); absent otherwise. */
  merge: Schema.optionalWith(MergeNote, { exact: true }),
  /** A run completed in a `--merge --approve` sweep: a person's word on its merge; absent otherwise. */
  approval: Schema.optionalWith(ApprovalNote, { exact: true })
})
export type LoopState = typeof LoopState.Type

export const CommitInfo = Schema.Struct({
  hash: Schema.String,
  subject: Schema.String,
  author: Schema.String,
  date: Schema.String
})
export type CommitInfo = typeof CommitInfo.Type

/** `--max-limit-wait` can be at most a week. */
export const MAX_LIMIT_WAIT_MS = 7 * 24 * 3_600_000

/**
 * The loop settings a run is started with, validated once at the edge. A message says what is wrong
 * with the field its issue's path names (`must be a positive whole number`), without naming it: a
 * front end names the field in its own terms (the CLI's flags) from that path.
 */
export const LoopOptions = Schema.Struct({
  minIterations: Schema.Int.pipe(Schema.positive({ message: () => "must be a positive whole number" })),
  maxIterations: Schema.Int.pipe(Schema.positive({ message: () => "must be a positive whole number" })),
  completionPromise: Schema.Trim.pipe(
    Schema.nonEmptyString({ message: () => "must not be empty" }),
    Schema.filter((s) => !/[<>]/.test(s), { message: () => "must not contain '<' or '>'" })
  ),
  stream: Schema.Boolean,
  failFast: Schema.Boolean,
  commit: Schema.Boolean,
  /** Milliseconds of harness silence before it is killed. */
  inactivityTimeoutMs: Schema.Int.pipe(Schema.positive({ message: () => "must be above 0" })),
  /** Commits shown in the prompt's `Recent commits` section; 0 leaves the section out. */
  historyCount: Schema.Int.pipe(Schema.nonNegative({ message: () => "must be 0 or more" })),
  includeMerges: Schema.Boolean,
  /** Refuse the promise while `tasks.md` has open tasks. */
  requireTasks: Schema.Boolean,
  /** Keep `errors.md` when the change completes, instead of archiving it. */
  keepErrors: Schema.Boolean,
  /** Journal entries of earlier runs shown in the prompt (the current run's are always shown). */
  errorHistory: Schema.Int.pipe(Schema.nonNegative({ message: () => "must be 0 or more" })),
  /** Spend caps: US dollars, tokens (as `countTokens` counts them), milliseconds since the run began. */
  maxCostUsd: Schema.NullOr(Schema.Number.pipe(Schema.positive({ message: () => "must be above 0" }))),
  maxTokens: Schema.NullOr(Schema.Int.pipe(Schema.positive({ message: () => "must be a positive whole number" }))),
  maxDurationMs: Schema.NullOr(Schema.Number.pipe(Schema.positive({ message: () => "must be above 0" }))),
  /** Iterations in a row without progress before the loop stops; 0 turns the stall breaker off. */
  stallIterations: Schema.Int.pipe(Schema.nonNegative({ message: () => "must be 0 or more" })),
  /** Failed iterations in a row before the loop stops (1 with `failFast`); 0 turns the failure breaker off. */
  maxConsecutiveFailures: Schema.Int.pipe(
    Schema.nonNegative({ message: () => "must be 0 or more" })
  ),
  /** Shell commands that must all pass before a claim of completion is believed, in order. */
  verify: Schema.Array(Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "needs a command, e.g. \"pnpm test\""))),
  /** Milliseconds one check may run before its process group is stopped and it counts as failed. */
  verifyTimeoutMs: Schema.Int.pipe(Schema.positive({ message: () => "must be above 0" })),
  /** The longest wait for one usage limit to lift; 0 does not wait. At most 7 days. */
  maxLimitWaitMs: Schema.Number.pipe(
    Schema.between(0, MAX_LIMIT_WAIT_MS, { message: () => "must be between 0 and 7d" })
  )
}).pipe(
  Schema.filter((o) =>
    o.minIterations <= o.maxIterations ||
    { path: ["minIterations"], message: `(${o.minIterations}) must not be above the maximum number of iterations (${o.maxIterations})` }
  )
)
export type LoopOptions = typeof LoopOptions.Type
