// BENCHMARKS.md's rows and section for the dashboard's cost (bench/figures/dashboard.mjs).
const code = (text) => `\`${text}\``
const share = (x) => `${(x * 100).toFixed(1)}% of a core`
const row = (cells) => `| ${cells.join(" | ")} |`

/** The figures table's row: the server's CPU with every page open, next to one page. */
export const dashboardRow = (d) => {
  const most = d.rounds.at(-1)
  const one = d.rounds.find((r) => r.pages === 1) ?? d.rounds[0]
  return row([
    `the dashboard (${code("--serve")} alone, ${d.loops} loops writing their state every 0.5 s): the server's CPU with ${most.pages} pages open`,
    share(most.cpuShare),
    "the same with one page open",
    share(one.cpuShare),
    one.cpuShare > 0 ? `${(most.cpuShare / one.cpuShare).toFixed(2)}x` : "",
    "none set yet",
    "measured"
  ])
}

export const dashboardSection = (results) => {
  const d = results.dashboard
  if (!d) return ""
  return [
    "### The dashboard: what serving pages costs",
    "",
    `${code("spool ralph --serve")} alone in a copy of the example workspace with ${d.loops} more changes, each with a loop's state and one history record; while it serves, the state file of every change is rewritten every half second (written whole beside it and renamed into place, as a running loop writes it), so every loop looks as if it were running. Pages are opened as the page opens its list: an HTTP request for ${code("/events")} that stays open. For each count of pages, after two seconds to settle, the server process's CPU time (user and system, from ${code("/proc/<pid>/stat")}) over ${d.seconds} s of wall time.`,
    "",
    "| pages open | the server's CPU | events sent to each page a second |",
    "| ---: | ---: | ---: |",
    ...d.rounds.map((r) => row([String(r.pages), share(r.cpuShare), r.pages === 0 ? "" : r.eventsPerPagePerSecond.toFixed(1)])),
    ""
  ].join("\n")
}
