// Mutation testing of the judgements users pay for: `pnpm mutate` (see mutation/run.mjs).
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)

/** The modules in scope: the completion rule, tasks, guards, redaction, the stores, the loop's policy and checks, git, each agent's decoder. */
export const scope = [
  "packages/core/src/CompletionJudge.ts",
  "packages/core/src/CompletionRule.ts",
  "packages/core/src/Tasks.ts",
  "packages/core/src/Guards.ts",
  "packages/core/src/LimitWait.ts",
  "packages/core/src/Redact.ts",
  "packages/core/src/OutputLog.ts",
  "packages/core/src/HistoryStore.ts",
  "packages/core/src/ErrorJournal.ts",
  "packages/core/src/JournalEntry.ts",
  "packages/core/src/LoopLock.ts",
  "packages/core/src/Iteration.ts",
  "packages/core/src/Loop.ts",
  "packages/core/src/PromptBuilder.ts",
  "packages/core/src/Verification.ts",
  "packages/core/src/JsonOutput.ts",
  "packages/git/src/GitSummaryLive.ts",
  "packages/git/src/GitOutput.ts",
  "packages/harness-*/src/*{Event,Output,Limit}.ts"
]

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
  concurrency: 3,
  timeoutMS: 20_000,
  reporters: ["progress", "clear-text", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  ignorePatterns: ["**/dist/**", "bench", ".bench", "reports", "examples", "packages/cli"]
}
