// Timing: wall time of whole processes, medians of several runs, figures interleaved with their
// references so that a noisy moment of the machine falls on both alike.
import { spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** A process to time: `command` and `args`, plus `cwd`, `env`, `codes` (exit codes that count as success), `stdout` ("ignore" for /dev/null) and `setup`. */
export const program = (name, command, args = [], options = {}) => ({ name, command, args, ...options })

/** Runs a program once and returns its wall time in milliseconds, spawn to exit; fails on an unexpected exit code. */
export const timeOnce = (p) => {
  const start = process.hrtime.bigint()
  const result = spawnSync(p.command, p.args, {
    cwd: p.cwd,
    env: p.env ?? process.env,
    input: p.input ?? "",
    stdio: ["pipe", p.stdout ?? "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024
  })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  const ok = p.codes ?? [0]
  if (result.error || !ok.includes(result.status)) {
    throw new Error(
      `${p.name}: ${result.error?.message ?? `exit code ${result.status} (signal ${result.signal})`}\n${String(result.stderr).slice(-2000)}`
    )
  }
  return ms
}

/**
 * Runs each program `runs` times, round-robin (a, b, c, a, b, c, ...), after `warmup` untimed rounds.
 * `setup` of a program, if given, runs untimed before each of its runs.
 */
export const interleaved = (programs, { runs, warmup = 1 }) => {
  const times = Object.fromEntries(programs.map((p) => [p.name, []]))
  for (let round = 0; round < warmup + runs; round++) {
    for (const p of programs) {
      p.setup?.()
      const ms = timeOnce(p)
      if (round >= warmup) times[p.name].push(ms)
    }
  }
  return Object.fromEntries(programs.map((p) => [p.name, { runs: times[p.name], median: median(times[p.name]) }]))
}

const peakOf = (pid) => {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) : 0
  } catch {
    return 0
  }
}

/**
 * Runs a program once, polling its own peak resident set (VmHWM in /proc/<pid>/status, which the
 * kernel keeps as a high-water mark, so polling misses only a peak reached in the last interval).
 * Children of the program are not included. Returns wall time, exit code and peak KiB.
 */
export const runWithPeakMemory = (p, { pollMs = 10 } = {}) =>
  new Promise((resolve, reject) => {
    const start = process.hrtime.bigint()
    const child = spawn(p.command, p.args, { cwd: p.cwd, env: p.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] })
    let peakKiB = 0
    let stdout = ""
    let stderr = ""
    const poll = setInterval(() => (peakKiB = Math.max(peakKiB, peakOf(child.pid))), pollMs)
    child.stdout.on("data", (d) => (stdout = (stdout + d).slice(-100_000)))
    child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-100_000)))
    child.on("error", (error) => {
      clearInterval(poll)
      reject(error)
    })
    // By `exit` the process is reaped and its /proc entry gone: the peak is what the polls saw.
    child.on("exit", () => clearInterval(poll))
    child.on("close", (code, signal) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      resolve({ ms, code, signal, peakKiB, stdout, stderr })
    })
  })

export const ratio = (figure, reference) => figure / reference

export const fmtMs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`)
export const fmtRatio = (r) => `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}x`
export const fmtMiB = (kib) => `${(kib / 1024).toFixed(0)} MiB`
export const fmtRate = (bytesPerMs) => {
  const perSecond = bytesPerMs * 1000
  return perSecond >= 1024 ** 3 ? `${(perSecond / 1024 ** 3).toFixed(2)} GiB/s` : `${(perSecond / 1024 ** 2).toFixed(0)} MiB/s`
}
