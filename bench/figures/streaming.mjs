// Streaming: the loop consuming `bytes` of harness output (bench/harness/flood.mjs: 1 MiB chunks,
// the promise split across the last two), next to `cat` of the same bytes to /dev/null.
import { spawnSync } from "node:child_process"
import { closeSync, existsSync, openSync, statSync } from "node:fs"
import { join } from "node:path"
import { median, program, runWithPeakMemory, timeOnce } from "../lib/measure.mjs"
import { benchDir, rootDir } from "../lib/paths.mjs"
import { clearLoopState } from "../lib/repo.mjs"
import { harnessCommand, loopArgs, spoolProgram, statusJson } from "../lib/spool.mjs"

const flood = join(rootDir, "bench", "harness", "flood.mjs")

/** The flood harness's output, kept in `.bench/` so the reference reads exactly the bytes the loop gets. */
const floodFile = (bytes) => {
  const file = join(benchDir, `flood-${bytes}-v1.txt`)
  if (existsSync(file) && statSync(file).size === bytes) return file
  const fd = openSync(file, "w")
  try {
    const result = spawnSync(process.execPath, [flood, String(bytes)], { stdio: ["ignore", fd, "inherit"] })
    if (result.status !== 0) throw new Error(`flood.mjs exited with ${result.status}`)
  } finally {
    closeSync(fd)
  }
  if (statSync(file).size !== bytes) throw new Error(`flood.mjs wrote ${statSync(file).size} bytes, not ${bytes}`)
  return file
}

/** A program with its stdout sent to /dev/null. */
const toDevNull = (p) => ({ ...p, stdout: "ignore" })

export const streaming = async ({ workspace, bytes, runs, referenceSamples = 5 }) => {
  const file = floodFile(bytes)
  const harness = harnessCommand(process.execPath, flood, String(bytes))
  const loop = spoolProgram("loop", loopArgs(harness, ["--no-stream", "--no-commit", "--max-iterations", "1"]), { cwd: workspace })
  const cat = toDevNull(program("cat to /dev/null", "cat", [file]))
  const diagnostics = [
    toDevNull(program("the harness alone, to /dev/null", process.execPath, [flood, String(bytes)])),
    program("cat through a pipe into cat, to /dev/null", "sh", ["-c", `cat '${file}' | cat > /dev/null`]),
    program("cat through a pipe into a Node reader that drops it", "sh", ["-c", `cat '${file}' | '${process.execPath}' -e 'process.stdin.on("data", () => {})'`])
  ]
  const loopRuns = []
  const catMs = []
  const diagnosticMs = diagnostics.map(() => [])
  timeOnce(cat)
  for (let round = 0; round < runs; round++) {
    clearLoopState(workspace)
    const run = await runWithPeakMemory(loop)
    // Exit 3 is --max-iterations reached: the promise was missed, which the figure reports.
    if (run.code !== 0 && run.code !== 3) throw new Error(`the loop exited with ${run.code}: ${run.stderr.slice(-500)}`)
    const status = statusJson(workspace)
    loopRuns.push({ ...run, completionDetected: status.history.at(-1)?.completionDetected === true })
    for (let i = 0; i < referenceSamples; i++) catMs.push(timeOnce(cat))
    diagnostics.forEach((p, i) => diagnosticMs[i].push(timeOnce(p)))
  }
  // The same loop with less output: how much of the peak is there before streaming adds to it.
  const smallerPeaks = []
  for (const size of [1024 ** 2, 128 * 1024 ** 2].filter((n) => n < bytes)) {
    clearLoopState(workspace)
    const run = await runWithPeakMemory(spoolProgram("loop", loopArgs(harnessCommand(process.execPath, flood, String(size)), ["--no-stream", "--no-commit", "--max-iterations", "1"]), { cwd: workspace }))
    if (run.code !== 0) throw new Error(`the loop with ${size} bytes of output exited with ${run.code}`)
    smallerPeaks.push({ bytes: size, peakKiB: run.peakKiB })
  }
  clearLoopState(workspace)
  const loopMedian = median(loopRuns.map((r) => r.ms))
  return {
    bytes,
    harness: "node bench/harness/flood.mjs",
    loop: { median: loopMedian, runs: loopRuns.map((r) => r.ms) },
    peakKiB: Math.max(...loopRuns.map((r) => r.peakKiB)),
    peakRunsKiB: loopRuns.map((r) => r.peakKiB),
    completionDetected: loopRuns.every((r) => r.completionDetected && r.code === 0),
    cat: { median: median(catMs), runs: catMs },
    diagnostics: diagnostics.map((p, i) => ({ name: p.name, median: median(diagnosticMs[i]) })),
    smallerPeaks
  }
}
