// BENCHMARKS.md from a run's results: the figures with their references and goals, what each
// measures, by how much a missed goal is missed and what it would take, the machine, how to reproduce.
import { dashboardRow, dashboardSection } from "./dashboardSection.mjs"
import { sandboxRows, sandboxSection } from "./sandboxSection.mjs"
import { fmtMiB, fmtMs, fmtRate, fmtRatio } from "./measure.mjs"

/** The project's goals: `--status` at most 1.8x `node -e 0`, a loop's overhead at most 1.5x `git status`. */
const STATUS_GOAL = 1.8
const LOOP_GOAL = 1.5

const GIB = 1024 ** 3
const pct = (x) => `${(x * 100).toFixed(x < 0.1 ? 2 : 1)}%`
const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`
const code = (text) => `\`${text}\``
const sizeOf = (bytes) => (bytes >= GIB ? `${bytes / GIB} GiB` : `${bytes / 1024 ** 2} MiB`)

/** "at most N x": met, or missed with the time it would have to take. */
const atMost = (measured, reference, goal) => {
  const r = measured / reference
  if (r <= goal) return "met"
  const target = goal * reference
  return `missed: ${(r / goal).toFixed(2)} times the goal; it would have to take ${fmtMs(target)} here, ${fmtMs(measured - target)} less`
}

const row = (cells) => `| ${cells.join(" | ")} |`
const notMeasured = (figure, reason) => row([figure, "not measured", "", "", "", "", `failed: ${reason}`])

const failureOf = (results, prefix) => results.failures.find((f) => f.name.startsWith(prefix))?.message.split("\n")[0] ?? "see the run's output"

const figuresTable = (results) => {
  const { status: s, loop, git: g, streaming: t, model: m } = results
  const lines = [
    row(["figure", "measured", "reference", "reference measured", "ratio", "goal", "verdict"]),
    row(["---", "---:", "---", "---:", "---:", "---", "---"])
  ]
  if (s) {
    lines.push(row([`${code("spool ralph --status --change 001-01")} wall time`, fmtMs(s.short.median), code("node -e 0"), fmtMs(s.node.median), fmtRatio(s.short.median / s.node.median), `at most ${STATUS_GOAL}x`, atMost(s.short.median, s.node.median, STATUS_GOAL)]))
  } else lines.push(notMeasured("`--status` wall time", failureOf(results, "spool ralph --status")))
  const large = loop?.repositories.find((r) => r.name === "large")
  if (large) {
    lines.push(row([`loop overhead per iteration, ${loop.iterations} iterations, harness exits at once, 20,000 files / 2,000 commits`, fmtMs(large.perIteration), `${code("git status --porcelain")} in that repository`, fmtMs(large.gitStatus.median), fmtRatio(large.perIteration / large.gitStatus.median), `at most ${LOOP_GOAL}x`, atMost(large.perIteration, large.gitStatus.median, LOOP_GOAL)]))
  } else lines.push(notMeasured("loop overhead per iteration", failureOf(results, "loop overhead")))
  if (g) {
    // An iteration takes one snapshot: its summary's, which the next iteration starts from.
    const summary = g.large.summaryUnchanged.median
    const growth = (summary - g.small.summaryUnchanged.median) / (g.large.gitStatus.median - g.small.gitStatus.median)
    lines.push(row(["git summary of an iteration (one work-tree snapshot, diffed against the previous one; nothing changed), same repository", fmtMs(summary), code("git status --porcelain"), fmtMs(g.large.gitStatus.median), fmtRatio(summary / g.large.gitStatus.median), "grows with the repository no more than `git status` does", growth <= 1.1 ? `met: grows ${fmtRatio(growth)} as fast` : `missed: grows ${fmtRatio(growth)} as fast as \`git status\` (from the small workspace to this repository)`]))
  } else lines.push(notMeasured("git summary of an iteration", failureOf(results, "git work")))
  if (t) {
    const size = sizeOf(t.bytes)
    for (const h of t.harnesses) {
      lines.push(row([`streaming ${size} of agent output, ${h.name} harness: wall time (throughput)`, `${fmtMs(h.loop.median)} (${fmtRate(t.bytes / h.loop.median)})`, "`agent \\| cat` to /dev/null", `${fmtMs(h.reference.median)} (${fmtRate(t.bytes / h.reference.median)})`, fmtRatio(h.loop.median / h.reference.median), `at most ${h.goal}x`, atMost(h.loop.median, h.reference.median, h.goal)]))
    }
    lines.push(row([`streaming ${size}: peak memory of the spool process (highest of every harness and run)`, fmtMiB(t.peakKiB), "", "", "", "under 150 MiB", t.peakKiB < 150 * 1024 ? "met" : `missed by ${fmtMiB(t.peakKiB - 150 * 1024)}`]))
    lines.push(row([`streaming ${size}: the promise (split across the last two chunks of the command harness; in the last message of each JSON harness)`, t.completionDetected ? "detected" : "not detected", "", "", "", "detected", t.completionDetected ? "met" : "missed"]))
  } else lines.push(notMeasured("streaming", failureOf(results, "streaming")))
  if (s) {
    lines.push(row([`${code("--status")} with ${s.longHistory.toLocaleString("en-US")} history records`, fmtMs(s.long.median), `${code("--status")} with 10 records`, fmtMs(s.short.median), fmtRatio(s.long.median / s.short.median), "at most 1.3x", atMost(s.long.median, s.short.median, 1.3)]))
  }
  const w = results.sweep
  if (w) {
    lines.push(row([`a sweep of ${w.overhead.changes} changes whose agent claims completion at once, per change`, fmtMs(w.overhead.perChange), "a lone loop on one change, same agent", fmtMs(w.overhead.lone.median), fmtRatio(w.overhead.perChange / w.overhead.lone.median), "at most 1.1x", atMost(w.overhead.perChange, w.overhead.lone.median, 1.1)]))
  } else lines.push(notMeasured("a sweep, per change", failureOf(results, "sweeps")))
  if (w?.memory) {
    lines.push(row([`${code(`--max-parallel ${w.memory.parallel}`)}: peak memory of the spool process, agents printing ${sizeOf(w.memory.bytes)} each`, fmtMiB(w.memory.peakKiB), "", "", "", "under 300 MiB", w.memory.peakKiB < 300 * 1024 ? "met" : `missed by ${fmtMiB(w.memory.peakKiB - 300 * 1024)}`]))
  } else lines.push(notMeasured("`--max-parallel`: peak memory", failureOf(results, "sweeps")))
  const r = results.remote
  if (r) {
    lines.push(row([`${code("--remote origin")}: what it adds per iteration (its push of the branch, the loop's state and the lease's renewal), ${r.iterations} iterations, remote over git:// on 127.0.0.1`, fmtMs(r.perIteration), `${code("git push")} of one new commit to the same remote`, fmtMs(r.push.median), fmtRatio(r.perIteration / r.push.median), "at most 1.5x", atMost(r.perIteration, r.push.median, 1.5)]))
  } else lines.push(notMeasured("`--remote`: per iteration", failureOf(results, "--remote")))
  if (results.sandbox) lines.push(...sandboxRows(results.sandbox))
  else lines.push(notMeasured("`--sandbox`: per iteration", failureOf(results, "--sandbox")))
  if (results.dashboard) lines.push(dashboardRow(results.dashboard))
  else lines.push(notMeasured("the dashboard: the server's CPU", failureOf(results, "the dashboard")))
  if (m) {
    const met = m.title === 0 && m.total === m.agent && m.agent === 1 && m.completionDetected
    lines.push(row(["model requests per opencode iteration (a fake model server counts them)", `${m.total} (${m.title} for a title)`, "one agent turn", "1", `${m.total}/1`, "no title request; exactly the agent's own requests", met ? "met" : "missed"]))
  } else lines.push(notMeasured("model requests per opencode iteration", failureOf(results, "model requests")))
  return lines.join("\n")
}

const startupSection = (results) => {
  const { status: s, profiles: p } = results
  if (!s) return ""
  const ratio = s.short.median / s.node.median
  const lines = [
    "### `--status` wall time",
    "",
    `Wall time of ${code("node packages/cli/dist/spool.js ralph --status --change 001-01")}, spawn to exit, in a copy of the example workspace holding 10 history records, next to ${code("node -e 0")}; ${s.short.runs.length} runs of each, interleaved, after 2 warm-up rounds. In the same rounds: ${code("spool --version")}, and two floors built exactly as spool is (esbuild, one minified ESM file): the smallest Effect program (${code("bench/probe/minimalEffect.ts")}) and the smallest ${code("@effect/cli")} program on ${code("@effect/platform-node")} (${code("bench/probe/minimalCli.ts")}).`,
    "",
    "| program | median | ratio to `node -e 0` |",
    "| --- | ---: | ---: |",
    ...[["`node -e 0`", s.node], ["smallest Effect program", s.minimalEffect], ["smallest `@effect/cli` program", s.minimalCli], ["`spool --version`", s.version], ["`spool ralph --status`", s.short]].map(([name, t]) => row([name, fmtMs(t.median), fmtRatio(t.median / s.node.median)])),
    ""
  ]
  if (ratio <= STATUS_GOAL) {
    lines.push(
      `The goal is met. Two things bring it there. A plain ${code("--status")} runs from a bundle of its own (${code("dist/spool-status.cjs")}) that leaves out ${code("@effect/cli")}, whose start-up alone is ${fmtRatio(s.minimalCli.median / s.node.median)} of ${code("node -e 0")} (the floor above); any other command line goes to the full bundle. And the loader (${code("dist/spool.js")}) compiles each bundle through a V8 code cache that the build makes, since Node 20 has no module compile cache.`,
      ""
    )
  }
  if (ratio > STATUS_GOAL) {
    lines.push(
      `The goal is missed: ${fmtRatio(ratio)} instead of ${STATUS_GOAL}x. ${code("--version")}, which reads no state at all, takes ${fmtMs(s.version.median)}${s.version.median >= 0.8 * s.short.median ? `, so nearly all of the time is loading the bundle, not the work of ${code("--status")}` : `; the rest is the work of ${code("--status")}`}.`,
      ""
    )
  }
  if (p) {
    const top = p.startup.groups.slice(0, 9)
    lines.push(
      `Where the time of one ${code("--status")} run goes (V8 CPU profile, self time, mapped to packages through the bundles' source maps; the profiler slows the run down, so the shares matter more than the milliseconds):`,
      "",
      "| where | self time | share |",
      "| --- | ---: | ---: |",
      ...top.map((g) => row([g.name, fmtMs(g.ms), pct(g.ms / p.startup.total)])),
      "",
      `What the bundle is made of (${kib(p.bundle.total)} of minified code, bytes per package from the source map):`,
      "",
      "| package | bytes | share |",
      "| --- | ---: | ---: |",
      ...p.bundle.packages.slice(0, 10).map((x) => row([x.name, kib(x.bytes), pct(x.bytes / p.bundle.total)])),
      ""
    )
  }
  if (ratio > STATUS_GOAL) {
    const undici = p?.bundle.packages.find((x) => x.name === "undici")
    lines.push(
      "What it would take:",
      "",
      `- Less code to compile. ${undici ? `${code("undici")} (${kib(undici.bytes)}, ${pct(undici.bytes / p.bundle.total)} of the bundle) is an HTTP client spool never uses; it arrives because ${code("bin.ts")} imports ${code("NodeContext")} and ${code("NodeRuntime")} from the ${code("@effect/platform-node")} index, which also exports the cluster and HTTP modules. Importing ${code("@effect/platform-node/NodeContext")} and ${code("@effect/platform-node/NodeRuntime")} leaves it out. ` : ""}${code("yaml")} and ${code("toml")} come with ${code("@effect/cli")}'s config-file support, ${code("fast-check")} with ${code("effect")}'s ${code("Schema")}.`,
      `- Even so, the floors above bound what a single bundle of this stack can reach: the smallest ${code("@effect/cli")} program already takes ${fmtRatio(s.minimalCli.median / s.node.median)} of ${code("node -e 0")}${s.minimalCli.median / s.node.median > STATUS_GOAL ? ", over the goal by itself" : ""}, and the smallest Effect program ${fmtRatio(s.minimalEffect.median / s.node.median)}. Reaching ${STATUS_GOAL}x takes lazy loading: answer ${code("--status")} (and ${code("--help")}, ${code("--version")}) from a small entry module and ${code("import()")} the loop, harnesses and git only when a loop runs, or parse the arguments of these read-only modes without ${code("@effect/cli")}. Node 20 has no module compile cache (${code("module.enableCompileCache")} arrives in Node 22.1), so compiling the bundle is paid on every start; its start-up snapshots (${code("--build-snapshot")}) would need the bundle as one script and a launcher that passes ${code("--snapshot-blob")}.`,
      ""
    )
  }
  return lines.join("\n")
}

const loopSection = (results) => {
  const { loop, git: g } = results
  if (!loop) return ""
  const large = loop.repositories.find((r) => r.name === "large")
  const small = loop.repositories.find((r) => r.name === "small")
  const lines = [
    "### Loop overhead per iteration",
    "",
    `${code(`spool ralph ... --harness command --harness-command ${loop.harness.program} --max-iterations ${loop.iterations} --stall-iterations 0`)} (the harness changes nothing, so the stall breaker is off): the whole run's wall time (start-up included), minus ${loop.iterations} times the harness's own time, divided by ${loop.iterations}. The harness is ${code(loop.harness.program)}, the cheapest real program: it exits 0 at once without reading the prompt on its stdin; its own time (${fmtMs(loop.harness.median)}, the median of spawning it from Node, spawn to exit) is what is subtracted. ${loop.repositories[0].loop.runs.length} runs in each repository, each followed by 7 runs of ${code("git status --porcelain")} in the same repository and 7 of the harness alone.`,
    "",
    "The large repository is generated once with one `git fast-import` stream and cached in `.bench/`: 20,000 files in 1,000 directories plus the example change, 2,000 commits (each adds 10 files and edits 5), the work tree checked out and its files dated a day before the index. The small one is a copy of the example workspace with one commit.",
    "",
    "| repository | run of the loop (median) | per iteration | `git status --porcelain` | ratio |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...loop.repositories.map((r) => row([r.name === "large" ? "20,000 files, 2,000 commits" : "example workspace", fmtMs(r.loop.median), fmtMs(r.perIteration), fmtMs(r.gitStatus.median), fmtRatio(r.perIteration / r.gitStatus.median)])),
    "",
    `No iteration changed a file, so none made a commit (${loop.repositories.map((r) => r.commitsMade).join(" and ")} commits made): auto-commit runs only when the iteration's summary counts changed files, and ${code("--no-commit")} would do the same git work here. The git work of every such iteration is the same: the recent commits for the prompt, and one work-tree snapshot after the harness, diffed against the previous one (an iteration's closing snapshot is the next one's opening snapshot; only the first iteration takes an extra one).`,
    ""
  ]
  if (g && large) {
    const gl = g.large
    const perIteration = gl.summaryUnchanged.median + gl.recentCommits.median
    const wait = gl.simpleGitSilent.median - gl.simpleGitPrinting.median
    const inside = g.insideGit
    const insideSnapshot = (inside.add ?? 0) + (inside["write-tree"] ?? 0) + (inside["rev-parse"] ?? 0)
    lines.push(
      "The git work alone, timed through spool's own `GitSummary` layer (`GitSummaryLive.layer` from `@spool/git`, bundled by `bench/probe/gitSummaryProbe.ts`), each operation next to `git status --porcelain` in the same repository, " +
        `${gl.gitStatus.runs.length} rounds after one warm-up round. "Inside git" is the time the git processes themselves report under ${code("GIT_TRACE2_EVENT")}, from a second, shorter pass.`,
      "",
      "| operation | large repository | ratio to `git status` | example workspace | ratio to `git status` |",
      "| --- | ---: | ---: | ---: | ---: |",
      row(["`git status --porcelain`", fmtMs(gl.gitStatus.median), "1x", fmtMs(g.small.gitStatus.median), "1x"]),
      ...[["snapshot (temporary index, `add -A`, `write-tree`)", "snapshot"], ["summary, nothing changed (a snapshot, trees equal)", "summaryUnchanged"], ["summary, one file changed (a snapshot and `diff-tree`)", "summaryOneFile"], ["recent commits (`git log`, 10)", "recentCommits"]].map(([label, key]) =>
        row([label, fmtMs(gl[key].median), fmtRatio(gl[key].median / gl.gitStatus.median), fmtMs(g.small[key].median), fmtRatio(g.small[key].median / g.small.gitStatus.median)])
      ),
      "",
      `Inside git, in the large repository: ${Object.entries(inside).filter(([name]) => name !== "check-ref-format").map(([name, ms]) => `${code(name)} ${fmtMs(ms)}`).join(", ")}. A snapshot spends ${fmtMs(insideSnapshot)} inside git and ${fmtMs(gl.snapshot.median)} in all.`,
      "",
      `${code("simple-git")}'s completion detection waits 50 ms after any process that wrote nothing to stdout or stderr: through a plain ${code("simple-git")} client, a command that prints nothing (${code("git check-ref-format")}) takes ${fmtMs(gl.simpleGitSilent.median)} and one that prints a line (${code("git rev-parse --verify HEAD")}) ${fmtMs(gl.simpleGitPrinting.median)}, about ${fmtMs(wait)} apart. So ${code("@spool/git")} runs the commands that print nothing on success (${code("git add -A")}, ${code("git commit -q")}) directly, with an argv array, and keeps ${code("simple-git")} for the rest. What remains in the example workspace, where git has almost nothing to scan, is the cost of starting git processes (a snapshot starts two).`,
      ""
    )
    const goal = LOOP_GOAL * large.gitStatus.median
    if (large.perIteration > goal) {
      lines.push(
        `The goal is missed: ${fmtMs(large.perIteration)} per iteration against at most ${fmtMs(goal)} (${LOOP_GOAL}x ${code("git status")}), ${(large.perIteration / goal).toFixed(2)} times the goal. Measured on its own (at another moment of the run, so the two need not add up), the git work of an iteration (one snapshot and summary, the recent commits) takes about ${fmtMs(perIteration)}.${small ? ` In the example workspace, where git has almost nothing to scan, a whole iteration costs ${fmtMs(small.perIteration)}: that much is spent outside the scan in any repository.` : ""} On this busy 2-core machine the figure moves by about a tenth between runs, so it lands on either side of the goal.`,
        "",
        "What it would take:",
        "",
        `- Fewer processes per iteration: the recent commits could be kept while HEAD has not moved. Each git process costs a few milliseconds to start, however small the repository.`,
        `- The scan itself is already at ${code("git status")}'s cost (${code("git add -A")} ${fmtMs(inside.add ?? 0)} against ${code("git status")} ${fmtMs(inside.status ?? gl.gitStatus.median)} inside git), so the rest of the budget is everything else: starting the harness, writing the state file, the history line and the iteration log.`,
        ""
      )
    } else lines.push("The goal is met.", "")
  }
  return lines.join("\n")
}

const gitGrowthSection = (results) => {
  const { git: g } = results
  if (!g) return ""
  const summary = (x) => x.snapshot.median + x.summaryUnchanged.median
  const growthStatus = g.large.gitStatus.median - g.small.gitStatus.median
  const growthSummary = summary(g.large) - summary(g.small)
  const growthSnapshot = g.large.snapshot.median - g.small.snapshot.median
  return [
    "### Git summary against `git status`",
    "",
    `The summary of an iteration is a snapshot of the work tree before the harness (a copy of the index, ${code("git add -A")} into it, ${code("write-tree")}) and one after it, then ${code("diff-tree")} when the trees differ. In the large repository it takes ${fmtMs(summary(g.large))} when nothing changed, ${fmtRatio(summary(g.large) / g.large.gitStatus.median)} of ${code("git status --porcelain")} (${fmtMs(g.large.gitStatus.median)}); with one changed file ${fmtMs(g.large.snapshot.median + g.large.summaryOneFile.median)}.`,
    "",
    `What grows with the repository, from the example workspace to 20,000 files and 2,000 commits: ${code("git status")} by ${fmtMs(growthStatus)}, one snapshot by ${fmtMs(growthSnapshot)} (${fmtRatio(growthSnapshot / growthStatus)}), the whole summary by ${fmtMs(growthSummary)} (${fmtRatio(growthSummary / growthStatus)}). Each scan of the work tree grows roughly as ${code("git status")} does; the summary scans it twice, so it grows about twice as fast. ${growthSummary / growthStatus > 1.1 ? "To grow no faster than `git status`, an iteration would have to scan once (see above: reuse the closing snapshot as the next opening one)." : ""} History size does not enter: no operation walks the 2,000 commits except ${code("git log")} for the 10 recent ones (${fmtMs(g.large.recentCommits.median)}).`,
    ""
  ].join("\n")
}

const streamingSection = (results) => {
  const { streaming: t, profiles: p } = results
  if (!t) return ""
  const size = sizeOf(t.bytes)
  const command = t.harnesses.find((h) => h.name === "command")
  const nodeReader = t.diagnostics.find((d) => d.name.includes("Node reader"))
  const lines = [
    "### Streaming",
    "",
    `One iteration of ${code("spool ralph ... --no-stream --no-commit --max-iterations 1")} in the example workspace, whose agent prints ${size}, next to the same agent program piped into ${code("cat")} to /dev/null (${code("sh -c 'agent | cat > /dev/null'")}). The command harness runs ${code(`node bench/harness/flood.mjs ${t.bytes}`)}: 64-byte text lines in 1 MiB chunks, the second-to-last chunk ending in ${code("\\n<promise>COMP")} and the last one being ${code("LETE</promise>\\n")}. Each JSON harness runs a fake agent (${code("bench/harness/<name>-agent.mjs")}, through ${code("SPOOL_OPENCODE_BIN")}, ${code("SPOOL_CLAUDE_BIN")}, ${code("SPOOL_CODEX_BIN")}, ${code("SPOOL_GEMINI_BIN")}, ${code("SPOOL_PI_BIN")}) printing that agent's JSON events: rounds of text deltas (claude's ${code("stream_event")}s, gemini's ${code("message")} pieces, pi's ${code("message_update")}s, each repeating the message so far), a short assistant message, usage, and a tool call whose output is a build and test log of 64 KiB to 4 MiB (JSON-escaped quotes, backslashes, non-ASCII), the last message claiming completion. Wall time is spawn to exit, start-up and the iteration's git work included. ${t.harnesses[0]?.loop.runs.length ?? 0} runs of the loop per harness, each followed by 3 of its reference; before each run of the loop, the last run's state (with its log) is removed and ${code("sync")} lets the disk take what is pending, untimed. The promise counts as detected when the run exits 0 and its history record says ${code("completionDetected")}. Peak memory is the spool process's own high-water mark (${code("VmHWM")} in ${code("/proc/<pid>/status")}, polled every 10 ms), the agent not included.`,
    "",
    "| harness | the loop (median) | throughput | `agent \\| cat` (median) | ratio | goal | peak memory (runs) | promise |",
    "| --- | ---: | ---: | ---: | ---: | --- | --- | --- |",
    ...t.harnesses.map((h) => row([h.name, fmtMs(h.loop.median), fmtRate(t.bytes / h.loop.median), fmtMs(h.reference.median), fmtRatio(h.loop.median / h.reference.median), `at most ${h.goal}x: ${atMost(h.loop.median, h.reference.median, h.goal).split(";")[0]}`, h.peakRunsKiB.map(fmtMiB).join(", "), h.completionDetected ? "detected" : "NOT detected"])),
    "",
    `Floors, in the same run: ${code("cat")} of the flood's ${size} (saved once in ${code(".bench/")}) to /dev/null ${fmtMs(t.cat.median)}${t.diagnostics.map((d) => `; ${d.name} ${fmtMs(d.median)}`).join("")}. Peak memory of the command-harness loop with less output: ${t.smallerPeaks.map((x) => `${fmtMiB(x.peakKiB)} with ${sizeOf(x.bytes)}`).join(", ")}.`,
    ""
  ]
  if (p) {
    for (const { name, profile } of p.streams ?? []) {
      if (!profile) continue
      const label = `the ${name} harness`
      lines.push(
        `Where the loop's time goes with ${sizeOf(p.streamBytes)} through ${label} (one profiled run, self time):`,
        "",
        "| where | self time | share |",
        "| --- | ---: | ---: |",
        ...profile.groups.slice(0, 10).map((g) => row([g.name, fmtMs(g.ms), pct(g.ms / profile.total)])),
        ""
      )
    }
  }
  lines.push(
    "How the bytes move: an agent's stdout and stderr are each one end of a local socket pair (`packages/cli/src/OutputChannel.ts`; the kind of descriptor Node gives a child for a pipe), read into one 256 KiB buffer that every read reuses. Reads are copied into 1 MiB buffers from a pool (`packages/core/src/bytes/ByteBatches.ts`): each batch handed to the loop is the part of a buffer filled since the last one, and a buffer is reused once every batch of it has been written to the log, so no buffer is allocated per batch and none is left for the garbage collector (spool forces no collections). Reading pauses while 4 MiB wait. The iteration log is written from the batches themselves, one write in flight while the next batch is read. Each batch is searched, without decoding it, for the anchors of the secret shapes (a pair of bytes each, rare in ordinary output, looked for all at once, 16 bytes at a time, by a small WebAssembly SIMD module, `packages/core/wasm/scan.wat`) and for 4 bytes of each secret environment value (Node's `Buffer.indexOf`); only the line around a find is decoded and run through the redactor. The command harness's bytes are what its completion judge reads: a batch holding no `<`, `&`, code fence or carriage return has only its first and last lines decoded; when output is shown, the live view writes the bytes as they came. A JSON harness splits lines with `Buffer.indexOf`; a line over 64 KiB is compacted as it comes, keeping what is outside strings and the first KiB of each string (string ends are found by the same module's quote scan, which passes a long string's escaped quotes at once), unless its first 64 KiB say it may be the agent's own text, which is read whole; shorter lines are decoded and parsed.",
    ""
  )
  const logCopy = t.diagnostics.find((d) => d.name.includes("new file"))
  // The groups taking most time, idle aside, summed over every streaming profile.
  const summed = new Map()
  for (const { profile } of p?.streams ?? []) {
    for (const g of profile?.groups ?? []) if (!g.name.startsWith("idle")) summed.set(g.name, (summed.get(g.name) ?? 0) + g.ms)
  }
  const busiest = [...summed].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms).slice(0, 4)
  const idleShares = (p?.streams ?? []).flatMap(({ name, profile }) => {
    const idle = profile?.groups.find((g) => g.name.startsWith("idle"))
    return idle && profile.total > 0 ? [{ name, share: idle.ms / profile.total }] : []
  })
  const missed = t.harnesses.filter((h) => h.loop.median > h.goal * h.reference.median)
  lines.push(
    `What remains: ${missed.length > 0 ? `${missed.map((h) => h.name).join(", ")} ${missed.length === 1 ? "misses its goal" : "miss their goals"}. ` : "every harness meets its goal. "}` +
      `The reference moves the bytes between two processes and drops them; the loop also writes every one of them to the iteration log${logCopy ? `, and writing the same ${size} into a new file beside the logs takes ${fmtMs(logCopy.median)} here on its own (${command ? `${fmtRatio(logCopy.median / command.reference.median)} of the command harness's reference` : ""}; on this virtual machine the same write took from 0.3 s to over 2 s at different moments of the work that led here, so this figure, and the loop's with it, moves between runs)` : ""}. ` +
      `${nodeReader && command ? `A Node process that only reads the same bytes through a pipe and drops them takes ${fmtMs(nodeReader.median)}. ` : ""}` +
      `${idleShares.length > 0 ? `In the profiles above, the loop's main thread is idle for ${idleShares.map((x) => `${pct(x.share)} (${x.name})`).join(", ")} of its time: it waits for the agent and for the log's writes. ` : ""}` +
      `${busiest.length > 0 ? `Of the rest, the largest items across those profiles are ${busiest.map((g) => `${g.name} (${fmtMs(g.ms)})`).join(", ")}: effect's share is the stream around each batch and the loop's own work before and after the agent runs, Node's is its socket reads, file writes and start-up. ` : ""}` +
      "The bytes themselves cost little: the scan of every byte for secrets (and, for JSON harnesses, for string ends) is the WebAssembly row; the native searches for line breaks and for the judge's marks (the native byte search row, where it shows) and the copy of each batch into the scan module (in core's row) are the rest of what reads every byte.",
    ""
  )
  if (t.peakKiB >= 150 * 1024) {
    const base = t.smallerPeaks[0]?.peakKiB ?? 0
    lines.push(
      `The peak memory is over the goal by ${fmtMiB(t.peakKiB - 150 * 1024)}${base > 0 ? `; with 1 MiB of output the loop already peaks at ${fmtMiB(base)}` : ""}.`,
      ""
    )
  } else {
    const base = t.smallerPeaks[0]?.peakKiB ?? 0
    lines.push(
      `Peak memory stays under the goal: ${fmtMiB(t.peakKiB)} at most${base > 0 ? `, of which ${fmtMiB(base)} is there with 1 MiB of output (Node, the bundle's code and heap)` : ""}; the rest is the batch pool (at most 12 spare 1 MiB buffers and those in flight), the scan module's memory (a batch), and the heap's young generation, which V8 grows while output streams.`,
      ""
    )
  }
  return lines.join("\n")
}

const historySection = (results) => {
  const { status: s } = results
  if (!s) return ""
  return [
    "### `--status` with a long history",
    "",
    `${code("spool ralph --status --change 001-01")} with ${s.longHistory.toLocaleString("en-US")} records in ${code("history.jsonl")} against the same with 10 records, in the same interleaved rounds as the start-up figure. The records are copies of a real one (from a two-iteration run made at the start of the suite, with a changed file and a commit), numbered as ${(s.longHistory / 50).toLocaleString("en-US")} runs of 50 iterations, with a matching ${code("state.json")}; both commands print the table of the last 10. ${code("--status")} reads the history backwards from its end, so its length does not show: ${fmtRatio(s.long.median / s.short.median)}.`,
    ""
  ].join("\n")
}

const remoteSection = (results) => {
  const { remote: r } = results
  if (!r) return ""
  const b = r.breakdown
  const push = b.byCommand.find((c) => c.label.startsWith("push"))
  const others = b.byCommand.filter((c) => c !== push)
  const othersInside = others.reduce((sum, c) => sum + c.median, 0)
  const perProcess = b.between / Math.max(1, b.commands - 1)
  const outside = b.around
  const ratio = r.perIteration / r.push.median
  const goal = 1.5 * r.push.median
  const lines = [
    "### `--remote`: what a remote adds per iteration",
    "",
    `${code(`spool ralph ... --harness command --harness-command <agent> --max-iterations ${r.iterations} --remote origin`)} in a clone of a bare copy of the example workspace, served by ${code("git daemon")} on 127.0.0.1 over git:// (${code("bench/lib/gitDaemon.mjs")}), next to the same loop with ${code("--worktree")} instead in another clone of it: ${code("--remote")} runs in the change's worktree too, so the two loops differ only in the remote. The agent, ${code(`sh -c 'echo "$SPOOL_ITERATION" > "bench-$SPOOL_ITERATION.txt"'`)}, writes one small file per iteration and never claims completion, so every iteration of both loops commits one file. The reference: ${code("git push origin <commit>:refs/heads/bench-push")} of ${r.iterations} commits of one new file each, one after the other, made beforehand in a third clone; only the pushes are timed, since both loops make their commits and the difference leaves them out. ${r.runs} round${r.runs === 1 ? "" : "s"} (the two loops, in turns the one and the other first, then the pushes), after a short warm-up round; each run starts with no loop state, no worktree or branch and nothing of the loop's on the remote, and automatic gc is off in the clones and on the remote, so that no run pays for one.`,
    "",
    `What the remote adds per iteration is taken between the starts of successive iterations (the history records' ${code("startedAt")}): in each round, the median gap of the loop with ${code("--remote")} less that of the loop without; the figure is the median of the rounds' differences (${r.rounds.map((x) => fmtMs(x.difference)).join(", ")}), so that a busy moment of the machine during one loop of a round does not carry it. An iteration's push happens in that gap, after its record is written and before the next iteration starts (the last one's, after the last record). The runs' wall times, spawn to exit, give the same per iteration plus what a run does only once.`,
    "",
    "| | with `--remote origin` | with `--worktree` | difference |",
    "| --- | ---: | ---: | ---: |",
    row([`a run of ${r.iterations} iterations (median wall time)`, fmtMs(r.remote.median), fmtMs(r.local.median), fmtMs(r.remote.median - r.local.median)]),
    row([`from one iteration's start to the next's (median over the rounds of each run's median of ${r.gaps.perRun} gaps; the difference, of the rounds' differences)`, fmtMs(r.gaps.remote), fmtMs(r.gaps.local), fmtMs(r.perIteration)]),
    row([`${code("git push")} of one new commit (median of ${r.push.runs.length})`, "", "", fmtMs(r.push.median)]),
    "",
    `Of the whole run's difference, ${r.iterations} times the per-iteration figure is ${fmtMs(r.iterations * r.perIteration)}; ${r.oneTime > 0 ? `the remaining ${fmtMs(r.oneTime)} is what a run does once` : "nothing is left over, within the noise, for what a run does once"}: ${b.once.map((c) => `${code(c.label)} ${fmtMs(c.inside)}`).join(", ")} (inside git, in the traced run below), and spool's own work around them.`,
    "",
    `An iteration's push, from one more run of each loop (${r.tracedIterations} iterations) under ${code("GIT_TRACE2_EVENT")}, apart from the timed rounds: ${b.commands === 1 ? "one git command" : `${b.commands} git commands, one after the other,`} over ${fmtMs(b.span)} from the first one's start to the last one's end (medians of ${b.checkpoints}); ${fmtMs(b.inside)} of it is inside git, ${fmtMs(b.between)} between the commands (starting each process, and spool's own work between them). The window after each iteration's commit (from its last git command to the next iteration's first), where the push falls and nothing else differs between the two loops, took ${fmtMs(b.window.remote)} with the remote and ${fmtMs(b.window.local)} without (medians): ${fmtMs(b.window.remote - b.window.local)} more, against the ${fmtMs(r.perIteration)} of the timed rounds; ${fmtMs(b.span)} of it is the push's commands, ${fmtMs(b.around)} spool's own work before and after them (reading the state directory, the lease's bookkeeping).`,
    "",
    "| git command | inside git (median) |",
    "| --- | ---: |",
    ...b.byCommand.map((c) => row([code(c.label), fmtMs(c.median)])),
    row([`the reference: ${code("git push")} of one commit`, fmtMs(b.plainPushInside)]),
    ""
  ]
  if (ratio <= 1.5) {
    lines.push("The goal is met.", "")
    return lines.join("\n")
  }
  const pushInside = push?.median ?? 0
  const estimate = pushInside + 3 * perProcess + Math.max(outside, 0)
  lines.push(
    `The goal is missed: ${fmtRatio(ratio)} of a plain push instead of 1.5x; the remote would have to add at most ${fmtMs(goal)} per iteration here, ${fmtMs(r.perIteration - goal)} less. Inside git, spool's push takes ${fmtMs(pushInside)} against ${fmtMs(b.plainPushInside)} for the plain push (${fmtRatio(pushInside / b.plainPushInside)}), for its three refs in one ${code("--atomic")} push with the lease checked${pushInside <= goal ? ", within the goal by itself" : ", over the goal by itself"}. The rest is the ${b.commands - 1} other commands, which spend ${fmtMs(othersInside)} inside git between them but cost about ${fmtMs(perProcess)} each to start from the loop, and ${outside > 0 ? `${fmtMs(outside)} of spool's own work around them` : "little else around them"}.`,
    "",
    "What it would take:",
    "",
    `- Fewer processes: everything but the push and the last ${code("update-ref")} only writes objects or reads values the loop already knows. The empty tree of the lease's commit has a fixed name (${code("git hash-object -t tree /dev/null")}), the branch's tip is the commit the loop has just made, and the state's parent is the state commit pushed last; the state's blobs, tree and commit and the lease's commit could be written by one process (one ${code("git fast-import")} stream with ${code("--export-marks")}, or objects written from Node directly) instead of ${b.commands - 2}.`,
    `- With three processes (one writing the objects, the push, the ${code("update-ref")}), the remote would add about ${fmtMs(estimate)} per iteration (the push inside git, three process starts at the rate above, spool's own work around them as now): ${estimate <= goal ? "within the goal" : `still over the goal${pushInside > goal ? ", which the push alone misses" : "; spool's own work around the commands would have to shrink too"}`}.`,
    ""
  )
  return lines.join("\n")
}

const modelSection = (results) => {
  const { model: m } = results
  if (!m) return ""
  return [
    "### Model requests per opencode iteration",
    "",
    `One ${code("spool ralph --change 001-01 --max-iterations 1 --no-commit")} iteration with the default harness, the real opencode binary (${code("packages/harness-opencode/node_modules/.bin/opencode")}, via ${code("SPOOL_OPENCODE_BIN")}), offline, against a fake OpenAI-compatible server on 127.0.0.1 (${code("bench/lib/fakeModelServer.mjs")}) that answers one plain text turn ending in the promise and counts every request; opencode runs with private HOME and XDG directories and its config in ${code("OPENCODE_CONFIG_CONTENT")}. A title request is one with no tools and a title-generator system prompt. Requests: ${m.total} in all, ${m.title} for a title, ${m.agent} for the agent's turn, ${m.other} other; the promise was ${m.completionDetected ? "detected" : "not detected"}; the run took ${fmtMs(m.ms)}.`,
    ""
  ].join("\n")
}

export const renderDocument = (results) => {
  const { machine: m } = results
  const failures = results.failures.length === 0
    ? ""
    : `\n**Some figures could not be measured in this run:**\n\n${results.failures.map((f) => `- ${f.name}: ${f.message.split("\n")[0]}`).join("\n")}\n`
  return `${[
    "# Benchmarks",
    "",
    `Written by ${code("pnpm bench")} on ${results.date.toISOString().slice(0, 10)}; the suite took ${results.totalSeconds.toFixed(0)} s after the build. Every figure is measured in the same run as its reference, interleaved with it, because the machine is noisy: each is the median of several runs, given next to the reference's median and the ratio of the two. Benchmarks are programs (${code("bench/")}), not tests: the test suite has no timing assertions.`,
    "",
    `Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB.toFixed(0)} GiB of memory, ${m.os}; Node ${m.node}, git ${m.git}; load average ${m.loadAverage.toFixed(2)} when the suite started${m.loadAverageAtEnd === undefined ? "" : ` and ${m.loadAverageAtEnd.toFixed(2)} when it ended`}. spool at commit ${m.commit}${m.uncommittedSources ? ", with uncommitted changes in packages/" : ""}, built by ${code("pnpm build")}.`,
    failures,
    "## Figures",
    "",
    figuresTable(results),
    "",
    "## What each figure measures, and what a missed goal would take",
    "",
    startupSection(results),
    loopSection(results),
    gitGrowthSection(results),
    streamingSection(results),
    historySection(results),
    remoteSection(results),
    sandboxSection(results),
    dashboardSection(results),
    modelSection(results),
    "## Reproducing",
    "",
    `${code("pnpm bench")} builds the CLI (${code("pnpm build")}), runs ${code("bench/run.mjs")}, prints each figure with its reference as it goes and rewrites this file. It needs git (with ${code("git daemon")}, which serves the ${code("--remote")} figure's remote on 127.0.0.1), ${code("cat")} and ${code("sh")}, Linux's ${code("/proc")} for the memory figure, and the installed dependencies (the opencode binary and esbuild come with ${code("pnpm install")}); it makes no network requests beyond 127.0.0.1. Generated data is kept in ${code(".bench/")} (about 1.1 GiB: the generated repository and the ${sizeOf(results.streaming?.bytes ?? GIB)} of the flood harness's output) and reused while its shape is unchanged; delete the directory to start afresh. ${code("node bench/run.mjs --quick")} runs fewer and smaller rounds and leaves this file alone, to check the suite itself.`,
    ""
  ].join("\n")}`
}
