// `pnpm bench`: measures spool against a reference for each figure in the same run, prints each
// as it goes, and rewrites BENCHMARKS.md. `node bench/run.mjs --quick` runs fewer, smaller rounds
// and prints only (a check of the suite itself, not figures to publish); `--out <file>` writes the
// document there instead of BENCHMARKS.md.
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { dashboardCost } from "./figures/dashboard.mjs"
import { gitSummary } from "./figures/gitSummary.mjs"
import { loopOverhead } from "./figures/loop.mjs"
import { modelRequests } from "./figures/modelRequests.mjs"
import { remoteOverhead } from "./figures/remote.mjs"
import { status } from "./figures/status.mjs"
import { streaming, streamingHarnesses } from "./figures/streaming.mjs"
import { sandboxCost } from "./figures/sandbox.mjs"
import { sweepOverhead, sweepPeakMemory } from "./figures/sweep.mjs"
import { renderDocument } from "./lib/document.mjs"
import { machine } from "./lib/machine.mjs"
import { fmtMiB, fmtMs, fmtRate, fmtRatio } from "./lib/measure.mjs"
import { rootDir, spoolBin } from "./lib/paths.mjs"
import { bundleComposition, profileRun } from "./lib/profile.mjs"
import { clearLoopState, largeRepository, smallWorkspace } from "./lib/repo.mjs"
import { lastRun, loopArgs, runSpool } from "./lib/spool.mjs"

const quick = process.argv.includes("--quick")
const settings = quick
  ? { statusRuns: 5, loopRuns: 1, iterations: 10, gitRuns: 4, streamBytes: 128 * 1024 ** 2, streamRuns: 1, profileBytes: 32 * 1024 ** 2, sweepBytes: 16 * 1024 ** 2, parallel: 4, remoteIterations: 8, remoteRuns: 3, sandboxIterations: 5 }
  : { statusRuns: 15, loopRuns: 3, iterations: 50, gitRuns: 10, streamBytes: 1024 ** 3, streamRuns: 3, profileBytes: 128 * 1024 ** 2, sweepBytes: 128 * 1024 ** 2, parallel: 4, remoteIterations: 25, remoteRuns: 6, sandboxIterations: 20 }

if (!existsSync(spoolBin)) {
  console.error(`bench: ${spoolBin} is missing; run \`pnpm bench\` (it builds first) or \`pnpm build\``)
  process.exit(1)
}

const started = performance.now()
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`
const say = (text) => console.log(text)
const line = (label, value, reference, refValue, ratioText) =>
  say(`  ${label.padEnd(44)} ${value.padStart(11)}   ${reference.padEnd(30)} ${refValue.padStart(11)}   ${ratioText}`)

const results = { settings, machine: machine(), date: new Date(), failures: [] }
const { machine: m } = results
say(`spool benchmarks${quick ? " (quick: fewer, smaller rounds; BENCHMARKS.md is left alone)" : ""}`)
say(`  ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB.toFixed(0)} GiB, node ${m.node}, git ${m.git}, load ${m.loadAverage.toFixed(2)}`)
say(`  spool at ${m.commit}${m.uncommittedSources ? " with uncommitted changes in packages/" : ""}`)

/** Runs one figure; a failure is recorded and reported, and the others still run. */
const figure = async (name, run) => {
  say(`\n${name} [${elapsed()}]`)
  try {
    return await run()
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    results.failures.push({ name, message })
    say(`  FAILED: ${message.split("\n").slice(0, 6).join("\n  ")}`)
    return null
  }
}

// Preparation: the large repository (cached in .bench/) and a real history record to copy.
const large = await figure("preparing", () => {
  const t = performance.now()
  const repo = largeRepository()
  say(`  large repository ${repo.generated ? `generated in ${fmtMs(performance.now() - t)}` : "reused"}: ${repo.dir}`)
  return repo
})
const template = await figure("a real history record", () => {
  // Each iteration changes a file, so the record carries a git summary and a commit.
  const dir = smallWorkspace()
  const result = runSpool(loopArgs("sh -c 'echo \"$SPOOL_ITERATION\" > notes.txt'", ["--max-iterations", "2"]), dir)
  if (result.code !== 3) throw new Error(`the two-iteration run exited with ${result.code}: ${result.stderr}`)
  const run = lastRun(dir)
  say(`  ${JSON.stringify(run.record).length} bytes: ${JSON.stringify(run.record).slice(0, 100)}...`)
  return run
})

if (template !== null) {
  results.status = await figure("spool ralph --status", async () => {
    const r = await status({ template, runs: settings.statusRuns })
    line("--status, 10 records (wall time)", fmtMs(r.short.median), "node -e 0", fmtMs(r.node.median), fmtRatio(r.short.median / r.node.median))
    line("spool --version (diagnostic)", fmtMs(r.version.median), "node -e 0", fmtMs(r.node.median), fmtRatio(r.version.median / r.node.median))
    line("minimal Effect program (floor)", fmtMs(r.minimalEffect.median), "node -e 0", fmtMs(r.node.median), fmtRatio(r.minimalEffect.median / r.node.median))
    line("minimal @effect/cli program (floor)", fmtMs(r.minimalCli.median), "node -e 0", fmtMs(r.node.median), fmtRatio(r.minimalCli.median / r.node.median))
    line(`--status, ${r.longHistory} records`, fmtMs(r.long.median), "--status, 10 records", fmtMs(r.short.median), fmtRatio(r.long.median / r.short.median))
    return r
  })
}

if (large !== null) {
  const small = smallWorkspace()
  results.loop = await figure(`loop overhead per iteration (${settings.iterations} iterations, ${settings.loopRuns} runs)`, () => {
    const r = loopOverhead({
      repositories: [{ name: "large", dir: large.dir }, { name: "small", dir: small }],
      iterations: settings.iterations,
      runs: settings.loopRuns
    })
    say(`  the harness alone (${r.harness.program}): ${fmtMs(r.harness.median)}`)
    for (const repo of r.repositories) {
      line(`${repo.name} repository: per iteration`, fmtMs(repo.perIteration), "git status --porcelain", fmtMs(repo.gitStatus.median), fmtRatio(repo.perIteration / repo.gitStatus.median))
    }
    return r
  })
  results.git = await figure(`git work of an iteration, through @spool/git (${settings.gitRuns} rounds)`, async () => {
    const r = await gitSummary({ large: large.dir, small, runs: settings.gitRuns })
    for (const size of ["large", "small"]) {
      const g = r[size]
      for (const [key, label] of [["snapshot", "snapshot"], ["summaryUnchanged", "summary, nothing changed"], ["summaryOneFile", "summary, one file changed"], ["recentCommits", "recent commits (10)"]]) {
        line(`${size}: ${label}`, fmtMs(g[key].median), "git status --porcelain", fmtMs(g.gitStatus.median), fmtRatio(g[key].median / g.gitStatus.median))
      }
    }
    line("simple-git: a command printing nothing", fmtMs(r.large.simpleGitSilent.median), "one printing a line", fmtMs(r.large.simpleGitPrinting.median), "")
    say(`  inside git (large): ${Object.entries(r.insideGit).map(([name, ms]) => `${name} ${fmtMs(ms)}`).join(", ")}`)
    return r
  })
}

if (large !== null) {
  results.sandbox = await figure(`--sandbox: per iteration and per check (${settings.sandboxIterations} iterations, ${settings.loopRuns} runs)`, () => {
    const r = sandboxCost({ dir: large.dir, iterations: settings.sandboxIterations, runs: settings.loopRuns })
    line("large repository: per iteration, --sandbox", fmtMs(r.perIteration.walled), "without", fmtMs(r.perIteration.plain), `${fmtRatio(r.perIteration.walled / r.perIteration.plain)} (goal: at most 2x)`)
    line(`a check (true), --sandbox`, fmtMs(r.perCheck.walled), "without", fmtMs(r.perCheck.plain), fmtRatio(r.perCheck.walled / r.perCheck.plain))
    say(`  the sandbox's start, once per run: ${fmtMs(r.startup)}`)
    return r
  })
}

results.streaming = await figure(`streaming ${fmtMiB(settings.streamBytes / 1024)} of agent output (${settings.streamRuns} runs per harness)`, async () => {
  const workspace = smallWorkspace()
  const r = await streaming({ workspace, bytes: settings.streamBytes, runs: settings.streamRuns })
  for (const h of r.harnesses) {
    line(`${h.name}: throughput`, fmtRate(r.bytes / h.loop.median), "agent | cat", fmtRate(r.bytes / h.reference.median), `${fmtRatio(h.loop.median / h.reference.median)} slower (goal: at most ${h.goal}x)`)
    say(`    peak memory ${fmtMiB(h.peakKiB)} (runs: ${h.peakRunsKiB.map(fmtMiB).join(", ")}); promise detected: ${h.completionDetected ? "yes, every run" : "NO"}`)
  }
  say(`  cat of the flood's bytes to /dev/null: ${fmtRate(r.bytes / r.cat.median)}`)
  for (const d of r.diagnostics) say(`  ${d.name}: ${fmtRate(r.bytes / d.median)}`)
  for (const x of r.smallerPeaks) say(`  peak memory of the command-harness loop with ${fmtMiB(x.bytes / 1024)} of output: ${fmtMiB(x.peakKiB)}`)
  return r
})

results.sweep = await figure(`sweeps (${settings.loopRuns + 2} rounds; ${settings.parallel} loops side by side)`, async () => {
  const overhead = sweepOverhead({ workspace: smallWorkspace(), runs: settings.loopRuns + 2 })
  line(`sweep of ${overhead.changes}: per change`, fmtMs(overhead.perChange), "a lone loop on one change", fmtMs(overhead.lone.median), fmtRatio(overhead.perChange / overhead.lone.median))
  const memory = await sweepPeakMemory({ workspace: smallWorkspace(), bytes: settings.sweepBytes, parallel: settings.parallel })
  say(`  --max-parallel ${memory.parallel}, ${fmtMiB(memory.bytes / 1024)} from each agent: peak memory ${fmtMiB(memory.peakKiB)} (${fmtMs(memory.ms)})`)
  return { overhead, memory }
})

results.remote = await figure(`--remote: per iteration (${settings.remoteIterations} iterations, ${settings.remoteRuns} runs)`, async () => {
  const r = await remoteOverhead({ iterations: settings.remoteIterations, runs: settings.remoteRuns })
  const ratio = r.perIteration / r.push.median
  line("--remote origin: added per iteration", fmtMs(r.perIteration), "git push of one commit", fmtMs(r.push.median), `${fmtRatio(ratio)} (goal: at most 1.5x, ${ratio <= 1.5 ? "met" : "missed"})`)
  say(`  between iterations' starts (medians of each run's ${r.gaps.perRun} gaps): ${fmtMs(r.gaps.remote)} with --remote, ${fmtMs(r.gaps.local)} with --worktree alone; per round ${r.rounds.map((x) => `${fmtMs(x.remote.gap)} - ${fmtMs(x.local.gap)} = ${fmtMs(x.difference)}`).join(", ")}`)
  say(`  whole runs: ${fmtMs(r.remote.median)} with --remote, ${fmtMs(r.local.median)} without: ${fmtMs(r.remote.median - r.local.median)} more, ${r.iterations} times ${fmtMs(r.perIteration)} and ${fmtMs(r.oneTime)} once per run`)
  const b = r.breakdown
  say(`  an iteration's push (traced, ${b.checkpoints} of them): ${b.commands} git command${b.commands === 1 ? "" : "s"} over ${fmtMs(b.span)}, ${fmtMs(b.inside)} of it inside git, ${fmtMs(b.between)} between them`)
  say(`    ${b.byCommand.map((c) => `${c.label} ${fmtMs(c.median)}`).join("; ")}`)
  say(`    a plain git push of one commit: ${fmtMs(b.plainPushInside)} inside git`)
  say(`    after each commit, to the next iteration's first git command: ${fmtMs(b.window.remote)} with --remote, ${fmtMs(b.window.local)} without; of the difference, the push's commands ${fmtMs(b.span)}, spool's own work around them ${fmtMs(b.around)}`)
  return r
})

results.dashboard = template === null ? null : await figure("the dashboard: --serve over 50 loops, pages open", async () => {
  const r = await dashboardCost({ workspace: smallWorkspace(), template, seconds: quick ? 3 : 10 })
  for (const x of r.rounds) say(`  ${String(x.pages).padStart(2)} pages open: the server's CPU ${(x.cpuShare * 100).toFixed(1)}% of a core${x.pages === 0 ? "" : `, ${x.eventsPerPagePerSecond.toFixed(1)} events a second to each page`}`)
  return r
})

results.model = await figure("model requests per opencode iteration", async () => {
  const r = await modelRequests({ workspace: smallWorkspace() })
  say(`  requests: ${r.total} (title: ${r.title}, agent turns: ${r.agent}, other: ${r.other}); promise detected: ${r.completionDetected}; ${fmtMs(r.ms)}`)
  return r
})

results.profiles = await figure("where the time goes (CPU profiles, one run each)", () => {
  const workspace = smallWorkspace()
  const startup = profileRun(["ralph", "--status", "--change", "001-01"], workspace)
  // Every streaming harness, one profiled run each.
  const streams = streamingHarnesses(settings.profileBytes).map((h) => {
    clearLoopState(workspace)
    return { name: h.name, profile: profileRun(h.args, workspace, h.env) }
  })
  clearLoopState(workspace)
  const bundle = bundleComposition()
  if (startup === null || streams.some((s) => s.profile === null) || bundle === null) throw new Error("the bundle has no source map (dist/spool-main.cjs.map)")
  say(`  --status: ${startup.groups.slice(0, 4).map((g) => `${g.name} ${fmtMs(g.ms)}`).join("; ")}`)
  for (const s of streams) say(`  streaming ${fmtMiB(settings.profileBytes / 1024)} through ${s.name}: ${s.profile.groups.slice(0, 4).map((g) => `${g.name} ${fmtMs(g.ms)}`).join("; ")}`)
  say(`  bundle ${(bundle.total / 1024).toFixed(0)} KiB: ${bundle.packages.slice(0, 4).map((p) => `${p.name} ${(p.bytes / 1024).toFixed(0)} KiB`).join(", ")}`)
  return { startup, streams, streamBytes: settings.profileBytes, bundle }
})

results.totalSeconds = (performance.now() - started) / 1000
results.machine.loadAverageAtEnd = machine().loadAverage
say(`\ndone in ${elapsed()}${results.failures.length > 0 ? `; ${results.failures.length} figure(s) FAILED` : ""}`)
const outIndex = process.argv.indexOf("--out")
const out = outIndex > 0 ? process.argv[outIndex + 1] : quick ? null : join(rootDir, "BENCHMARKS.md")
if (out) {
  writeFileSync(out, renderDocument(results))
  say(`${out} written`)
}
process.exitCode = results.failures.length > 0 ? 1 : 0
