// Loop overhead per iteration: a run of `iterations` iterations with a harness that exits at once,
// minus the harness's own time, divided by the iterations; next to `git status --porcelain` in
// the same repository. Measured in the generated large repository and in the small example workspace.
import { existsSync } from "node:fs"
import { median, program, timeOnce } from "../lib/measure.mjs"
import { clearLoopState, git } from "../lib/repo.mjs"
import { lastRun, loopArgs, spoolProgram } from "../lib/spool.mjs"

/** The cheapest real program: exits 0 at once without reading its stdin. */
export const trueProgram = ["/bin/true", "/usr/bin/true"].find((path) => existsSync(path)) ?? "true"

/**
 * `runs` rounds; each round: one loop run in each repository, then `samples` runs of git status
 * and of the harness alone, so every loop run has its references measured around it.
 */
export const loopOverhead = ({ repositories, iterations, runs, samples = 7 }) => {
  const loops = repositories.map(({ name, dir }) => ({
    name,
    dir,
    headBefore: git(dir, "rev-parse", "HEAD").trim(),
    loop: spoolProgram(`loop in ${name}`, loopArgs(trueProgram, ["--max-iterations", String(iterations), "--stall-iterations", "0"]), { cwd: dir, codes: [3] }),
    status: program(`git status in ${name}`, "git", ["status", "--porcelain"], { cwd: dir }),
    loopMs: [],
    statusMs: []
  }))
  const harness = program("harness alone", trueProgram)
  const harnessMs = []
  for (const entry of loops) timeOnce(entry.status)
  for (let round = 0; round < runs; round++) {
    for (const entry of loops) {
      clearLoopState(entry.dir)
      entry.loopMs.push(timeOnce(entry.loop))
      for (let i = 0; i < samples; i++) entry.statusMs.push(timeOnce(entry.status))
    }
    for (let i = 0; i < samples; i++) harnessMs.push(timeOnce(harness))
  }
  const harnessMedian = median(harnessMs)
  return {
    harness: { program: trueProgram, median: harnessMedian, runs: harnessMs },
    iterations,
    repositories: loops.map((entry) => {
      const { record } = lastRun(entry.dir)
      const commits = git(entry.dir, "rev-list", "--count", `${entry.headBefore}..HEAD`).trim()
      if (record.iteration !== iterations) throw new Error(`${entry.name}: the last record is iteration ${record.iteration}, not ${iterations}`)
      clearLoopState(entry.dir)
      const loopMedian = median(entry.loopMs)
      return {
        name: entry.name,
        loop: { median: loopMedian, runs: entry.loopMs },
        perIteration: (loopMedian - iterations * harnessMedian) / iterations,
        gitStatus: { median: median(entry.statusMs), runs: entry.statusMs },
        commitsMade: Number(commits)
      }
    })
  }
}
