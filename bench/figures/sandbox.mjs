// What `--sandbox` adds: per iteration, loops of `iterations` iterations and of one of an agent that
// exits at once, with and without the sandbox: the difference of the two lengths over the iterations
// between them, less the agent's own time (so the sandbox's start, once per run, is left out and
// said apart); per check, a one-iteration run whose agent claims completion, with `checks` checks of
// `true` and with none, with and without the sandbox. In the generated large repository.
import { median, program, timeOnce } from "../lib/measure.mjs"
import { clearLoopState } from "../lib/repo.mjs"
import { harnessCommand, lastRun, loopArgs, spoolProgram } from "../lib/spool.mjs"
import { trueProgram } from "./loop.mjs"

const CLAIM = harnessCommand("sh", "-c", "echo '<promise>COMPLETE</promise>'")

export const sandboxCost = ({ dir, iterations, runs, checks = 5, samples = 7 }) => {
  const loop = (n, extra) =>
    spoolProgram(`loop of ${n} ${extra.join(" ")}`, loopArgs(trueProgram, ["--max-iterations", String(n), "--stall-iterations", "0", ...extra]), { cwd: dir, codes: [3] })
  const claim = (extra) => spoolProgram(`claim ${extra.join(" ")}`, loopArgs(CLAIM, ["--max-iterations", "1", ...extra]), { cwd: dir, codes: [0] })
  const verify = Array.from({ length: checks }, () => ["--verify", "true"]).flat()
  const cases = {
    plain: loop(iterations, []),
    walled: loop(iterations, ["--sandbox"]),
    plainOne: loop(1, []),
    walledOne: loop(1, ["--sandbox"]),
    claimPlain: claim([]),
    claimWalled: claim(["--sandbox"]),
    checksPlain: claim(verify),
    checksWalled: claim([...verify, "--sandbox"])
  }
  const times = Object.fromEntries(Object.keys(cases).map((key) => [key, []]))
  const harness = program("harness alone", trueProgram)
  const harnessMs = []
  for (let round = 0; round < runs; round++) {
    // In turns, the one and the other first: a busy moment falls on both alike.
    const order = round % 2 === 0 ? Object.keys(cases) : Object.keys(cases).reverse()
    for (const key of order) {
      clearLoopState(dir)
      times[key].push(timeOnce(cases[key]))
      if (key === "walled" && lastRun(dir).record.sandboxed !== true) throw new Error("a --sandbox run's record does not say it ran sandboxed")
    }
    for (let i = 0; i < samples; i++) harnessMs.push(timeOnce(harness))
  }
  clearLoopState(dir)
  const m = Object.fromEntries(Object.entries(times).map(([key, list]) => [key, median(list)]))
  const harnessMedian = median(harnessMs)
  const perIteration = (long, one) => (long - one) / (iterations - 1) - harnessMedian
  return {
    iterations,
    runs,
    checks,
    harness: { program: trueProgram, median: harnessMedian },
    medians: m,
    times,
    perIteration: { plain: perIteration(m.plain, m.plainOne), walled: perIteration(m.walled, m.walledOne) },
    // A run's start with the sandbox (loading the runtime, starting its proxy) beyond one without.
    startup: (m.walledOne - m.plainOne) - (perIteration(m.walled, m.walledOne) - perIteration(m.plain, m.plainOne)),
    perCheck: { plain: (m.checksPlain - m.claimPlain) / checks, walled: (m.checksWalled - m.claimWalled) / checks }
  }
}
