// BENCHMARKS.md's rows and section for what `--sandbox` adds (bench/figures/sandbox.mjs).
import { fmtMs, fmtRatio } from "./measure.mjs"

const code = (text) => `\`${text}\``
const row = (cells) => `| ${cells.join(" | ")} |`

/** The goal: the loop's overhead per iteration with the sandbox at most this many times that without. */
export const SANDBOX_GOAL = 2

const verdict = (measured, reference, goal) =>
  measured <= goal * reference
    ? "met"
    : `missed: ${(measured / reference / goal).toFixed(2)} times the goal; it would have to take ${fmtMs(goal * reference)} here, ${fmtMs(measured - goal * reference)} less`

/** The figures table's rows: an iteration's overhead with the sandbox against without, and a check's. */
export const sandboxRows = (x) => [
  row([
    `${code("--sandbox")}: loop overhead per iteration, ${x.iterations} iterations, harness exits at once, 20,000 files / 2,000 commits`,
    fmtMs(x.perIteration.walled),
    "the same loop without it",
    fmtMs(x.perIteration.plain),
    fmtRatio(x.perIteration.walled / x.perIteration.plain),
    `at most ${SANDBOX_GOAL}x`,
    verdict(x.perIteration.walled, x.perIteration.plain, SANDBOX_GOAL)
  ]),
  row([`${code("--sandbox")}: a check (${code("--verify true")})`, fmtMs(x.perCheck.walled), "the same check without it", fmtMs(x.perCheck.plain), fmtRatio(x.perCheck.walled / x.perCheck.plain), "none set", "measured"])
]

export const sandboxSection = (results) => {
  const x = results.sandbox
  if (!x) return ""
  const m = x.medians
  return [
    "### `--sandbox`: what the walls add",
    "",
    `In the generated repository, ${x.runs} round${x.runs === 1 ? "" : "s"}, the runs of each round in turns one way and the other: loops of ${x.iterations} iterations and of one, with ${code("--sandbox")} and without, of a harness that exits at once (${code(x.harness.program)}, ${fmtMs(x.harness.median)} alone). Per iteration is the difference of the two lengths over the ${x.iterations - 1} iterations between them, less the harness's own time, so that the sandbox's start (loading its runtime, starting its proxy: ${fmtMs(x.startup)} more per run) is counted once per run, not per iteration. Per check: a one-iteration run whose agent claims completion at once, with ${x.checks} checks of ${code("true")} and with none; the difference over ${x.checks}.`,
    "",
    "| | with `--sandbox` | without | difference |",
    "| --- | ---: | ---: | ---: |",
    row([`a run of ${x.iterations} iterations (median wall time)`, fmtMs(m.walled), fmtMs(m.plain), fmtMs(m.walled - m.plain)]),
    row(["a run of one iteration", fmtMs(m.walledOne), fmtMs(m.plainOne), fmtMs(m.walledOne - m.plainOne)]),
    row(["per iteration, the harness's time left out", fmtMs(x.perIteration.walled), fmtMs(x.perIteration.plain), fmtMs(x.perIteration.walled - x.perIteration.plain)]),
    row([`per check (${x.checks} checks of ${code("true")})`, fmtMs(x.perCheck.walled), fmtMs(x.perCheck.plain), fmtMs(x.perCheck.walled - x.perCheck.plain)]),
    "",
    `Each sandboxed process is wrapped by the runtime (its rules written out for bubblewrap) and started inside a new user, mount, PID and network namespace with a proxy bridge of its own; that is what an iteration and a check pay once each.`,
    ""
  ].join("\n")
}
