// Streaming: the loop consuming `bytes` of agent output, next to the same agent program piped into
// `cat` to /dev/null, for the command harness (bench/harness/flood.mjs: 1 MiB chunks of text lines,
// the promise split across the last two) and for each JSON harness (bench/harness/<name>-agent.mjs:
// that agent's JSON events, tool outputs of 64 KiB to 4 MiB, the promise in the last message).
import { spawnSync } from "node:child_process"
import { closeSync, existsSync, openSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { median, program, runWithPeakMemory, timeOnce } from "../lib/measure.mjs"
import { benchDir, rootDir } from "../lib/paths.mjs"
import { clearLoopState } from "../lib/repo.mjs"
import { CHANGE, harnessCommand, loopArgs, spoolProgram, statusJson } from "../lib/spool.mjs"

const flood = join(rootDir, "bench", "harness", "flood.mjs")
const LOOP_FLAGS = ["--no-stream", "--no-commit", "--max-iterations", "1"]

/** The flood harness's output, kept in `.bench/` so the `cat` diagnostic reads exactly the bytes the loop gets. */
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

/**
 * Runs `remove` (deleting the last run's GiB), then waits for the disk to take what is pending
 * (\`sync\`): neither the write-back of the last log nor the discard of its blocks then falls in
 * the next timed run.
 */
const settle = (remove) => {
  remove()
  spawnSync("sync")
}

/** A program with its stdout sent to /dev/null. */
const toDevNull = (p) => ({ ...p, stdout: "ignore" })

/** The harnesses measured: how the loop runs each, and the agent program alone. */
export const streamingHarnesses = (bytes) => [
  {
    name: "command",
    goal: 2,
    agent: `node bench/harness/flood.mjs ${bytes}`,
    argv: [process.execPath, flood, String(bytes)],
    env: {},
    args: loopArgs(harnessCommand(process.execPath, flood, String(bytes)), LOOP_FLAGS)
  },
  ...["opencode", "claude", "codex", "gemini", "pi", "copilot", "qwen"].map((name) => {
    const bin = join(rootDir, "bench", "harness", `${name}-agent.mjs`)
    return {
      name,
      goal: 3,
      agent: `bench/harness/${name}-agent.mjs`,
      argv: [bin],
      // copilot's run directories (its usage file, its log) under the benchmark's own directory.
      env: { [`SPOOL_${name.toUpperCase()}_BIN`]: bin, SPOOL_BENCH_BYTES: String(bytes), ...(name === "copilot" ? { COPILOT_HOME: join(benchDir, "copilot-home") } : {}) },
      args: ["ralph", "Benchmark iteration.", "--change", CHANGE, "--harness", name, ...LOOP_FLAGS]
    }
  })
]

/** `agent | cat > /dev/null`, through a shell as the reference is written. */
const agentPipedToCat = (h) =>
  program(`${h.name}: agent | cat`, "sh", ["-c", `${h.argv.map((a) => `'${a}'`).join(" ")} | cat > /dev/null`], { env: { ...process.env, ...h.env } })

export const streaming = async ({ workspace, bytes, runs, referenceSamples = 3 }) => {
  const file = floodFile(bytes)
  const cat = toDevNull(program("cat of the flood's bytes to /dev/null", "cat", [file]))
  // The iteration log's own cost: the same bytes written to a new file where the loop writes its log
  // (removed, and the disk settled, outside the timing, as the loop's own log is between runs).
  const copy = join(workspace, ".spool", "bench-copy.txt")
  const diagnostics = [
    toDevNull(program("the flood harness alone, to /dev/null", process.execPath, [flood, String(bytes)])),
    program("cat of the same bytes through a pipe into a Node reader that drops them", "sh", ["-c", `cat '${file}' | '${process.execPath}' -e 'process.stdin.on("data", () => {})'`]),
    { ...program("cat of the same bytes into a new file beside the loop's logs", "sh", ["-c", `cat '${file}' > '${copy}'`]), before: () => settle(() => rmSync(copy, { force: true })) }
  ]
  const harnesses = []
  for (const h of streamingHarnesses(bytes)) {
    const loop = spoolProgram(h.name, h.args, { cwd: workspace, env: h.env })
    const reference = agentPipedToCat(h)
    const loopRuns = []
    const referenceMs = []
    timeOnce(reference)
    // Alternating: each run of the loop is followed by runs of its reference.
    for (let round = 0; round < runs; round++) {
      settle(() => clearLoopState(workspace))
      const run = await runWithPeakMemory(loop)
      // Exit 3 is --max-iterations reached: the promise was missed, which the figure reports.
      if (run.code !== 0 && run.code !== 3) throw new Error(`the loop (${h.name}) exited with ${run.code}: ${run.stderr.slice(-500)}`)
      const status = statusJson(workspace)
      loopRuns.push({ ...run, completionDetected: status.history.at(-1)?.completionDetected === true })
      for (let i = 0; i < referenceSamples; i++) referenceMs.push(timeOnce(reference))
    }
    harnesses.push({
      name: h.name,
      agent: h.agent,
      goal: h.goal,
      loop: { median: median(loopRuns.map((r) => r.ms)), runs: loopRuns.map((r) => r.ms) },
      reference: { median: median(referenceMs), runs: referenceMs },
      peakKiB: Math.max(...loopRuns.map((r) => r.peakKiB)),
      peakRunsKiB: loopRuns.map((r) => r.peakKiB),
      completionDetected: loopRuns.every((r) => r.completionDetected && r.code === 0)
    })
  }
  const catMs = []
  const diagnosticMs = diagnostics.map(() => [])
  for (let round = 0; round < runs; round++) {
    catMs.push(timeOnce(cat))
    diagnostics.forEach((p, i) => {
      p.before?.()
      diagnosticMs[i].push(timeOnce(p))
    })
  }
  rmSync(copy, { force: true })
  // The same loop with less output: how much of the peak is there before streaming adds to it.
  const smallerPeaks = []
  for (const size of [1024 ** 2, 128 * 1024 ** 2].filter((n) => n < bytes)) {
    clearLoopState(workspace)
    const run = await runWithPeakMemory(spoolProgram("loop", loopArgs(harnessCommand(process.execPath, flood, String(size)), LOOP_FLAGS), { cwd: workspace }))
    if (run.code !== 0) throw new Error(`the loop with ${size} bytes of output exited with ${run.code}`)
    smallerPeaks.push({ bytes: size, peakKiB: run.peakKiB })
  }
  clearLoopState(workspace)
  return {
    bytes,
    harnesses,
    peakKiB: Math.max(...harnesses.map((h) => h.peakKiB)),
    completionDetected: harnesses.every((h) => h.completionDetected),
    cat: { median: median(catMs), runs: catMs },
    diagnostics: diagnostics.map((p, i) => ({ name: p.name, median: median(diagnosticMs[i]) })),
    smallerPeaks
  }
}
