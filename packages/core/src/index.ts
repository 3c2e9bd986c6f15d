// The public face of @spool/core, room by room. What is not named here (byte scanning, the judge's
// machinery, an iteration's steps, the stores' file formats) stays inside its room.

// domain: the records every room speaks in.
export * from "./domain/Domain.js"
export * from "./text/Figures.js"
export { oneLine } from "./text/Text.js"

// state: the change's files under `.spool/.state/`, and the lock.
export { readTextFile } from "./state/AtomicFile.js"
export * from "./state/ContextStore.js"
export * from "./state/ErrorJournal.js"
export * from "./state/HistoryStore.js"
export * from "./state/LoopLock.js"
export { StateError } from "./state/StateError.js"
export * from "./status/LoopSummary.js"
export * from "./status/StatusReport.js"
export * from "./status/Dashboard.js"
export * from "./status/DashboardSource.js"
export * from "./state/Workspace.js"

// tree: the trees of changes spool reads (spool's, ito's, OpenSpec's, spec-kit's) and their task lists.
export * from "./tree/Layout.js"
export { findTrees, type FoundTrees } from "./tree/TreeFinder.js"
export { parseOpenSpecTasks } from "./tree/OpenSpecTasks.js"
export { parseSpecKitTasks } from "./tree/SpecKitTasks.js"
export { readTaskList } from "./tree/TreeTasks.js"

// prompt: what the agent is told.
export * from "./prompt/PromptBuilder.js"
export { formatProgress, openTaskCount, parseTasks, type Task, taskCounts, taskLabel, type TaskList, type TaskStatus } from "./prompt/Tasks.js"

// completion: whether the agent's own words claim completion.
export { type CompletionJudgement, judgeCompletion, makeCompletionJudge, type Verdict } from "./completion/CompletionJudge.js"

// verify: the project's checks of a claim (`--verify`).
export { CheckResult, describeCheck, describeVerification } from "./domain/CheckResult.js"
export * from "./verify/CheckRunner.js"

// sandbox: the walls around the agent and the checks (`--sandbox`), and who may pass them.
export * from "./sandbox/Sandbox.js"
export * from "./sandbox/SandboxPolicy.js"

// harness: driving an agent, and the scaffold each agent's package describes itself on.
export * as AgentHarness from "./harness/AgentHarness.js"
export * as CommandHarness from "./harness/CommandHarness.js"
export { addCost, addUsage, agentSpend, reviewSpend, sumAgentSpend, sumReviewSpend, UsageTotals, usageTotals } from "./domain/Usage.js"
export { splitArgs } from "./harness/ArgumentSplit.js"
export { currentGracePeriod } from "./harness/HarnessProcess.js"
export * from "./harness/HarnessService.js"
export * from "./harness/JsonOutput.js"
export * from "./harness/LogView.js"
export * as ByteBatches from "./bytes/ByteBatches.js"
export { compactJsonLine } from "./bytes/JsonCompact.js"
export { type DecodedLine, makeLineDecoder } from "./bytes/JsonLine.js"
export { type BufferedLine, makeLineBuffer } from "./bytes/LineBuffer.js"

// output: where the loop talks, and what it keeps secret.
export * from "./output/LoopReporter.js"
export { makeRedactor, REDACTED, type Redactor } from "./output/Redact.js"

// git: the repository as the loop sees it.
export * from "./git/GitSummary.js"
export * from "./git/Merges.js"
export * from "./git/Worktrees.js"

// guards: caps, breakers and usage-limit waits.
export { UnsupportedGuardError } from "./guards/Guards.js"
export * from "./guards/UsageLimitGate.js"
export * from "./agents/AgentChoice.js"
export * from "./agents/LoopAgents.js"

// live: what the loops of this process do, as they do it.
export * from "./live/LoopEvents.js"

// notify: telling a person what the loops did (`--notify`, `--webhook`).
export * from "./notify/Notice.js"
export { NOTIFY_TIMEOUT_MS, type NotifyTarget, targetName, WEBHOOK_TRIES } from "./notify/Delivery.js"
export * from "./notify/Notifications.js"
export { failureLine, keepFailure, NOTIFY_LOG } from "./notify/NotifyLog.js"

// loop: running one change's loop.
export { runLoop } from "./loop/Loop.js"
export { formatSummary, promiseFate } from "./loop/LoopFormat.js"
export * from "./loop/LoopResult.js"
export * from "./loop/LoopRequest.js"
export * from "./loop/Resume.js"

// remote: a change's loop kept on a git remote, one machine at a time by a lease.
export * from "./remote/Lease.js"
export * from "./remote/RemoteHome.js"
export * from "./remote/Checkpoint.js"
export * from "./remote/RemoteLease.js"

// sweep: many changes, one after another or side by side.
export * from "./sweep/SweepPolicy.js"
export * from "./sweep/Sweep.js"
export * from "./sweep/ChangeList.js"
export * from "./review/Review.js"
export * from "./review/ReviewDiff.js"
export * from "./review/ReviewGit.js"
export * from "./review/ReviewPrompt.js"
export * from "./review/Reviewers.js"
export * from "./review/VerdictRule.js"
