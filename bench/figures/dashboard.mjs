// The dashboard's cost: `spool ralph --serve` alone over a repository of 50 changes whose loops'
// state files are rewritten every half second, as running loops write theirs, with no page open,
// with one and with 20 (each page: the event stream of the list, as the page opens it); the
// server's CPU time (user and system, from /proc) per second of wall time.
import { spawn } from "node:child_process"
import { get } from "node:http"
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { addChanges } from "../lib/repo.mjs"
import { spoolBin } from "../lib/paths.mjs"
import { spoolEnv } from "../lib/spool.mjs"

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const TICKS_PER_SECOND = 100

/** The CPU time a process has used, in ms (utime + stime of /proc/<pid>/stat). */
const cpuMs = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
}

/** Writes `id`'s state as a loop at `iteration` writes it: whole beside it, then renamed into place. */
const writeState = (dir, template, id, iteration) => {
  const stateDir = join(dir, ".spool", ".state", "ralph", id)
  mkdirSync(stateDir, { recursive: true })
  const state = { ...template.state, status: "running", iteration, maxIterations: 1000, updatedAt: new Date().toISOString() }
  writeFileSync(join(stateDir, ".state.json.tmp"), `${JSON.stringify(state, null, 2)}\n`)
  renameSync(join(stateDir, ".state.json.tmp"), join(stateDir, "state.json"))
  if (iteration === 1) writeFileSync(join(stateDir, "history.jsonl"), `${JSON.stringify({ ...template.record, iteration: 1 })}\n`)
}

/** An open page's list stream: counts the events it is sent. */
const openPage = (url) => {
  const page = { events: 0, request: null }
  page.request = get(`${url}events`, (response) => {
    response.setEncoding("utf8")
    // An event is a `data:` line (keep-alive comments are not events).
    response.on("data", (text) => (page.events += text.split("\n").filter((line) => line.startsWith("data:")).length))
    response.on("error", () => undefined)
  })
  page.request.on("error", () => undefined)
  return page
}

export const dashboardCost = async ({ workspace, template, seconds, loops = 50, pageCounts = [0, 1, 20] }) => {
  const ids = addChanges(workspace, loops, "008")
  let iteration = 1
  for (const id of ids) writeState(workspace, template, id, iteration)
  const server = spawn(process.execPath, [spoolBin, "ralph", "--serve", "--no-interactive"], { cwd: workspace, env: spoolEnv(), stdio: ["ignore", "pipe", "pipe"] })
  let said = ""
  server.stdout.on("data", (text) => (said += text))
  server.stderr.on("data", (text) => (said += text))
  try {
    for (let i = 0; i < 600 && !/dashboard: http/.test(said); i++) await sleep(50)
    const url = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(said)?.[1]
    if (url === undefined) throw new Error(`spool ralph --serve said no address: ${said}`)
    // The loops go on writing their state throughout: every change, every half second.
    const writer = setInterval(() => {
      iteration++
      for (const id of ids) writeState(workspace, template, id, iteration)
    }, 500)
    const rounds = []
    try {
      for (const count of pageCounts) {
        const pages = Array.from({ length: count }, () => openPage(url))
        await sleep(2000)
        const before = { cpu: cpuMs(server.pid), at: performance.now(), events: pages.reduce((n, p) => n + p.events, 0) }
        await sleep(seconds * 1000)
        const after = { cpu: cpuMs(server.pid), at: performance.now(), events: pages.reduce((n, p) => n + p.events, 0) }
        for (const page of pages) page.request.destroy()
        const wallMs = after.at - before.at
        rounds.push({ pages: count, cpuShare: (after.cpu - before.cpu) / wallMs, eventsPerPagePerSecond: count === 0 ? 0 : (after.events - before.events) / count / (wallMs / 1000) })
        // One page must be kept up to date, or the setup is wrong; how many pages are is the figure.
        if (count === 1 && after.events === before.events) throw new Error(`an open page was sent no event in ${seconds} s`)
      }
    } finally {
      clearInterval(writer)
    }
    return { loops, seconds, rounds }
  } finally {
    server.kill("SIGINT")
    await new Promise((resolve) => server.on("close", resolve))
  }
}
