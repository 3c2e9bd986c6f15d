// The loop's per-iteration git work, timed directly through spool's GitSummary layer, each
// operation next to `git status --porcelain` in the same repository: the generated large one and
// the small example workspace, to see what grows with the repository. A second, shorter pass
// under GIT_TRACE2 tells how much of each operation is spent inside git itself.
import { spawnSync } from "node:child_process"
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { median } from "../lib/measure.mjs"
import { bundleProbe } from "../lib/bundle.mjs"
import { benchDir } from "../lib/paths.mjs"

const runProbe = (probe, repository, runs, env = process.env) => {
  const result = spawnSync(process.execPath, [probe, repository, String(runs)], { encoding: "utf8", env })
  if (result.status !== 0) throw new Error(`git summary probe: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/** Median time (ms) inside git per subcommand, from a GIT_TRACE2_EVENT file. */
const insideGit = (traceFile) => {
  const names = new Map()
  const times = {}
  for (const line of readFileSync(traceFile, "utf8").split("\n")) {
    if (line === "") continue
    const event = JSON.parse(line)
    if (event.event === "start") {
      const args = event.argv.slice(1)
      while (args[0] === "-c") args.splice(0, 2)
      names.set(event.sid, args[0])
    } else if (event.event === "exit" && names.has(event.sid)) {
      ;(times[names.get(event.sid)] ??= []).push(event.t_abs * 1000)
    }
  }
  return Object.fromEntries(Object.entries(times).map(([name, values]) => [name, median(values)]))
}

const medians = (times) => Object.fromEntries(Object.entries(times).map(([name, values]) => [name, { runs: values, median: median(values) }]))

/**
 * Medians (ms) of each git operation of an iteration and of `git status --porcelain`, over `runs`
 * rounds, in the large and the small repository; and, in the large one, the time inside git.
 */
export const gitSummary = async ({ large, small, runs, tracedRuns = 4 }) => {
  const probe = await bundleProbe("gitSummaryProbe")
  const result = { large: medians(runProbe(probe, large, runs)), small: medians(runProbe(probe, small, runs)) }
  const traceFile = join(benchDir, "git-summary-trace2.json")
  rmSync(traceFile, { force: true })
  runProbe(probe, large, tracedRuns, { ...process.env, GIT_TRACE2_EVENT: traceFile })
  result.insideGit = insideGit(traceFile)
  rmSync(traceFile, { force: true })
  return result
}
