// Sweeps the ready changes of a repository with an agent command, through spool's application
// alone: `node sweep.js <repository> "<agent command>"`. Each loop works in a worktree of its own,
// two at a time, and is merged into the branch checked out once complete. The sweep's lines are
// printed; the exit code is 0 when every change completed.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Application, Invocation, noNotices, Reports, Sweeps } from "@spool/app"
import { Effect, Layer } from "effect"

const [root = ".", agent = "my-agent --yes"] = process.argv.slice(2)

const sweep = Effect.gen(function*() {
  const sweeps = yield* Sweeps
  const report = yield* sweeps.run({
    selection: { _tag: "AllReady" },
    maxParallel: 2,
    merge: true,
    prompt: "",
    agent: { harness: "command", harnessCommand: agent, model: null, allowAll: false },
    fallback: [],
    rotate: false,
    review: [],
    maxReviews: 3,
    options: {
      minIterations: 1,
      maxIterations: 5,
      completionPromise: "COMPLETE",
      stream: true,
      failFast: false,
      commit: true,
      inactivityTimeoutMs: 15 * 60_000,
      historyCount: 10,
      includeMerges: false,
      requireTasks: true,
      keepErrors: false,
      errorHistory: 3,
      maxCostUsd: null,
      maxTokens: null,
      maxDurationMs: null,
      stallIterations: 5,
      maxConsecutiveFailures: 3,
      verify: [],
      verifyTimeoutMs: 10 * 60_000,
      maxLimitWaitMs: 0
    },
    worktree: true,
    resume: false,
    remote: null,
    deadline: null,
    notices: noNotices,
    sandbox: null,
    settings: { file: null, fromFile: [], fromCommandLine: [] }
  })
  return report.rows.every((row) => row.outcome === "complete" && row.merge?.merged === true)
})

const program = sweep.pipe(
  Effect.provide(Application.layer({ cwd: root, layout: null })),
  Effect.provide(Layer.mergeAll(
    Reports.lines((line) => console.log(line)),
    Layer.succeed(Invocation, { cwd: process.cwd(), env: process.env, pid: process.pid, stdinIsTTY: false, isRoot: false })
  )),
  Effect.provide(NodeContext.layer),
  Effect.catchAll((error) => Effect.sync(() => console.error(`sweep: ${error.message}`)).pipe(Effect.as(false))),
  Effect.map((completed) => void (process.exitCode = completed ? 0 : 1))
)

NodeRuntime.runMain(program)
