// Times the loop's per-iteration git work through spool's own GitSummary layer (@spool/git), next
// to `git status --porcelain` in the same repository. bench/figures/gitSummary.mjs bundles this
// file with esbuild (as the CLI's build does) and runs it: `node probe.mjs <repository> <runs>`.
import { GitSummary } from "@spool/core"
import { GitSummaryLive } from "@spool/git"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { simpleGit } from "simple-git"
import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const [cwd = ".", runsArg = "10"] = process.argv.slice(2)
const runs = Number(runsArg)

const timed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const start = performance.now()
    const value = yield* effect
    return [performance.now() - start, value] as const
  })

const gitStatus = () => {
  const start = performance.now()
  const result = spawnSync("git", ["status", "--porcelain"], { cwd, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`git status: ${result.stderr}`)
  if (result.stdout !== "") throw new Error(`the repository is not clean:\n${result.stdout.slice(0, 500)}`)
  return performance.now() - start
}

const program = Effect.gen(function*() {
  const git = yield* GitSummary
  if (!git.repository) throw new Error(`${cwd} is not a git work tree`)
  const series = () => [] as Array<number>
  const times = {
    gitStatus: series(),
    snapshot: series(),
    summaryUnchanged: series(),
    summaryOneFile: series(),
    recentCommits: series(),
    simpleGitSilent: series(),
    simpleGitPrinting: series()
  }
  // The git client @spool/git runs its commands with: a command that prints nothing next to one that prints a line.
  const client = simpleGit({ baseDir: cwd })
  const clientRun = (args: Array<string>) =>
    Effect.gen(function*() {
      const [ms] = yield* timed(Effect.promise(() => client.raw(args)))
      return ms
    })
  const probe = join(cwd, "bench-probe.txt")
  // The first round warms caches and is not kept.
  for (let round = 0; round <= runs; round++) {
    const status = gitStatus()
    const [snapshot, before] = yield* timed(git.snapshot)
    const [unchanged, same] = yield* timed(git.changesSince(before))
    writeFileSync(probe, `round ${round}\n`)
    const [oneFile, changed] = yield* timed(git.changesSince(before)).pipe(Effect.ensuring(Effect.sync(() => rmSync(probe, { force: true }))))
    const [recent] = yield* timed(git.recentCommits({ count: 10, includeMerges: false }))
    const silent = yield* clientRun(["check-ref-format", "refs/heads/main"])
    const printing = yield* clientRun(["rev-parse", "--verify", "HEAD"])
    if (same?.summary.changedFiles !== 0 || changed?.summary.changedFiles !== 1) {
      throw new Error(`unexpected summaries: ${JSON.stringify({ same, changed })}`)
    }
    if (round === 0) continue
    times.gitStatus.push(status)
    times.snapshot.push(snapshot)
    times.summaryUnchanged.push(unchanged)
    times.summaryOneFile.push(oneFile)
    times.recentCommits.push(recent)
    times.simpleGitSilent.push(silent)
    times.simpleGitPrinting.push(printing)
  }
  return times
})

Effect.runPromise(program.pipe(Effect.provide(GitSummaryLive.layer(cwd)))).then(
  (times) => process.stdout.write(`${JSON.stringify(times)}\n`),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
)
