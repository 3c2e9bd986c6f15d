// Mutation testing of the judgements users pay for: `pnpm mutate` (see mutation/run.mjs).
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)

const core = (name) => `packages/core/src/${name}.ts`
const coreTests = (...names) => names.map((name) => `packages/core/test/${name}.test.ts`)

/**
 * The modules in scope (the completion rule, tasks, guards, redaction, the stores, the loop's policy
 * and checks, the sweep's policy and runner, git, each agent's decoder, the lease, resume and the
 * deadline, the notices), in groups, each tested against its own unit tests only:
 * a module's mistakes are caught by the tests written for it, and a mutant runs those and no more.
 * The groups whose modules change least, and the small ones, come first, so a run cut short keeps the most.
 */
export const groups = [
  {
    name: "completion",
    mutate: [
      core("completion/CompletionJudge"),
      core("completion/LineText"),
      core("completion/JudgeState"),
      core("completion/JudgeVerdicts"),
      core("completion/JudgeLine"),
      core("completion/JudgeChunk"),
      core("completion/JudgeBytes"),
      core("completion/CompletionRule")
    ],
    tests: ["packages/core/test/Completion*.test.ts", ...coreTests("fuzz")]
  },
  // Loops that move between machines: the lease's decisions and its holding, resume and the deadline.
  { name: "lease", mutate: [core("remote/Lease"), core("remote/RemoteLease")], tests: coreTests("Lease") },
  { name: "resume", mutate: [core("loop/Resume"), core("loop/Deadline")], tests: coreTests("Resume", "Deadline") },
  // Being told: what each event tells, telling it, and telling beside the loops.
  { name: "notify", mutate: [core("notify/Notice"), core("notify/Delivery"), core("notify/Notifications")], tests: coreTests("Notice", "SweepNotice", "Notifications") },
  // Which agent runs: the fallback choice, and the limits the loops of a sweep share by agent.
  {
    name: "fallback",
    mutate: [core("agents/AgentChoice"), core("guards/UsageLimitGate"), core("loop/AgentTurn")],
    tests: coreTests("AgentChoice", "UsageLimitGate", "FallbackLoop", "ManyLoops")
  },
  // A claim's review: the verdict rule (the completion judge with the tag `verdict`), the findings, the diff cut to size, the end of what an agent said.
  {
    name: "review",
    mutate: [core("review/VerdictRule"), core("review/ReviewDiff"), core("review/Review"), core("output/TextTail")],
    tests: coreTests("VerdictRule", "ReviewDiff", "ReviewLoop", "TextTail")
  },
  {
    name: "redaction",
    mutate: [core("output/Redact"), core("output/OutputLog"), core("output/ByteOutputLog"), core("output/HeadTail"), core("bytes/Utf8Tail"), core("bytes/ByteConcat")],
    tests: coreTests("Redact", "OutputLog", "AgentRun", "HeadTail", "Utf8Tail")
  },
  {
    name: "tasks",
    mutate: [core("prompt/Tasks"), core("tree/OpenSpecTasks"), core("tree/SpecKitTasks"), core("tree/TreeTasks")],
    tests: coreTests("Tasks", "TreeTasks", "fuzz"),
    // What its tests read beyond their own folder: the task lists of real repositories, the CLI's fixtures.
    reads: ["packages/cli/test/fixtures/trees/**"]
  },
  // One view of a loop: its summary (abandoned or not, spend, tasks) and how money, durations and task counts are written.
  { name: "views", mutate: [core("status/LoopSummary"), core("text/Figures")], tests: coreTests("LoopSummary", "Figures") },
  // The sandbox's policy: what an agent and a check may write, read, reach and see.
  { name: "sandbox", mutate: [core("sandbox/SandboxPolicy")], tests: coreTests("SandboxPolicy") },
  // Which tree of changes a directory holds, and which one spool reads.
  { name: "trees", mutate: [core("tree/Layout"), core("tree/TreeFinder")], tests: coreTests("Trees") },
  // The sweep's policy and runner, and the guards: small groups, before the long ones.
  { name: "sweep", mutate: [core("sweep/SweepPolicy"), core("sweep/Sweep"), core("sweep/ChangeList")], tests: coreTests("SweepPolicy", "Sweep", "SweepApproval", "ChangeList", "SweepNotice") },
  { name: "guards", mutate: [core("guards/Guards")], tests: coreTests("Guards", "LoopGuards") },
  // The agents' decoders, a group each (a stopped run then loses less), and the JSON harnesses' shared part.
  ...["claude", "codex", "gemini", "opencode", "pi", "copilot", "qwen"].map((agent) => ({
    name: agent,
    mutate: [`packages/harness-${agent}/src/*{Event,Output,Limit}.ts`],
    tests: [`packages/harness-${agent}/test/*{Event,Output,Limit}.test.ts`]
  })),
  {
    name: "json-output",
    mutate: [core("harness/JsonOutput")],
    tests: ["packages/harness-*/test/*{Event,Output,Limit}.test.ts", ...coreTests("JsonOutput")]
  },
  {
    name: "stores",
    mutate: [core("state/HistoryStore"), core("state/ErrorJournal"), core("state/JournalEntry"), core("state/LoopLock")],
    tests: coreTests("HistoryStore", "ErrorJournal", "JournalEntry", "LoopLock", "Loop", "fuzz")
  },
  { name: "git", mutate: ["packages/git/src/GitSummaryLive.ts", "packages/git/src/GitOutput.ts"], tests: ["packages/git/test/*.test.ts"] },
  {
    name: "loop",
    mutate: [
      core("loop/Iteration"),
      core("loop/IterationPrompt"),
      core("loop/Claim"),
      core("loop/IterationCommit"),
      core("loop/IterationSteps"),
      core("loop/Loop"),
      core("loop/LoopStart"),
      core("loop/LoopRun"),
      core("loop/LoopAttempt"),
      core("loop/LoopStep"),
      core("loop/LoopEnding"),
      core("guards/LimitWait"),
      core("prompt/PromptBuilder"),
      core("verify/Verification")
    ],
    // The loop's own tests, and those of its runs on disk, side by side, resumed, with a deadline,
    // with fallback agents and with a reviewer (the loop's steps for those are in its modules).
    tests: coreTests(
      "Iteration", "Claim", "IterationSteps", "Loop", "LoopGuards", "LoopRun", "ManyLoops", "Resume", "Deadline", "LimitWait", "AgentLimitWait", "PromptBuilder", "Verification",
      "FallbackLoop", "ReviewLoop"
    )
  }
]

export const scope = groups.flatMap((group) => group.mutate)

export default {
  // Under pnpm, plugins are found only by their resolved paths.
  plugins: [require.resolve("@stryker-mutator/vitest-runner"), require.resolve("@stryker-mutator/typescript-checker")],
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts", related: true },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.mutate.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: scope,
  coverageAnalysis: "perTest",
  // A second run tests again only the mutants whose code or tests changed.
  incremental: true,
  incrementalFile: "reports/mutation/incremental.json",
  concurrency: 2,
  // A mutant that loops for ever waits this long past its tests' own time (half again); most timeouts
  // are such loops, and each also restarts a test runner, so the limit is most of what they cost.
  timeoutMS: 5_000,
  reporters: ["progress", "clear-text", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  ignorePatterns: ["**/dist/**", "bench", ".bench", "reports", "examples", "packages/cli"]
}
