// Sweeps: a sweep of ten changes whose agent claims completion at once, per change, next to a lone
// loop on one change with the same agent, measured in the same rounds; and the peak memory of a
// sweep of four changes side by side (`--max-parallel 4`) whose agents each print 128 MiB.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { median, program, runWithPeakMemory, timeOnce } from "../lib/measure.mjs"
import { rootDir } from "../lib/paths.mjs"
import { addChanges, clearLoopState, git } from "../lib/repo.mjs"
import { harnessCommand, spoolEnv, spoolProgram } from "../lib/spool.mjs"

const flood = join(rootDir, "bench", "harness", "flood.mjs")
const echo = ["/bin/echo", "/usr/bin/echo"].find((path) => existsSync(path)) ?? "echo"

/** Every worktree and branch a sweep left, gone: the next sweep makes them anew. */
const clearWorktrees = (dir, ids) => {
  clearLoopState(dir)
  git(dir, "worktree", "prune")
  for (const id of ids) git(dir, "branch", "-q", "-D", "--", `spool/${id}`)
}

/**
 * `runs` rounds; each round: one sweep of ten changes and one lone loop on one of them, both with
 * an agent that prints the promise and exits (`echo`), state cleared before each.
 */
export const sweepOverhead = ({ workspace, runs, changes = 10 }) => {
  const ids = addChanges(workspace, changes)
  const agent = harnessCommand(echo, "The work is complete. <promise>COMPLETE</promise>")
  const common = ["--harness", "command", "--harness-command", agent, "--no-interactive", "--no-stream"]
  const sweep = spoolProgram("sweep", ["ralph", "Bench.", "--module", "009", "--continue-module", ...common], { cwd: workspace })
  const lone = spoolProgram("lone loop", ["ralph", "Bench.", "--change", ids[0], ...common], { cwd: workspace })
  const sweepMs = []
  const loneMs = []
  for (let round = 0; round < runs + 1; round++) {
    clearLoopState(workspace)
    const s = timeOnce(sweep)
    clearLoopState(workspace)
    const l = timeOnce(lone)
    // The first round warms the disk cache and V8's code cache.
    if (round > 0) {
      sweepMs.push(s)
      loneMs.push(l)
    }
  }
  clearLoopState(workspace)
  const perChange = median(sweepMs) / changes
  return { changes, sweep: { median: median(sweepMs), runs: sweepMs }, perChange, lone: { median: median(loneMs), runs: loneMs } }
}

/** The peak resident memory of spool running four loops side by side, each agent printing `bytes`. */
export const sweepPeakMemory = async ({ workspace, bytes, parallel = 4 }) => {
  const ids = addChanges(workspace, parallel, "008")
  const args = [
    "ralph",
    "Bench.",
    "--module",
    "008",
    "--continue-module",
    "--max-parallel",
    String(parallel),
    "--harness",
    "command",
    "--harness-command",
    harnessCommand(process.execPath, flood, String(bytes)),
    "--no-interactive",
    "--no-stream",
    "--no-commit"
  ]
  const result = await runWithPeakMemory(program("sweep side by side", process.execPath, [join(rootDir, "packages", "cli", "dist", "spool.js"), ...args], {
    cwd: workspace,
    env: spoolEnv()
  }))
  clearWorktrees(workspace, ids)
  if (result.code !== 0) throw new Error(`the sweep exited with ${result.code}: ${result.stderr.slice(-2000)}`)
  const completed = (result.stdout.match(/^008-\d\d_bench-\d+ +complete /gm) ?? []).length
  if (completed !== parallel) throw new Error(`${completed} of ${parallel} changes completed:\n${result.stdout.slice(-2000)}`)
  return { parallel, bytes, peakKiB: result.peakKiB, ms: result.ms }
}
