// `spool ralph --status`: its wall time next to `node -e 0`, and with 100,000 history records
// next to 10 records. With them, the start-up floors of programs built like spool: the smallest
// Effect program and the smallest @effect/cli program, bundled the same way. One interleaved group,
// so all of them share the machine's moods.
import { bundleProbe } from "../lib/bundle.mjs"
import { interleaved, program } from "../lib/measure.mjs"
import { smallWorkspace } from "../lib/repo.mjs"
import { CHANGE, runSpool, spoolProgram, writeHistory } from "../lib/spool.mjs"

export const status = async ({ template, runs, longHistory = 100_000 }) => {
  const minimalEffect = await bundleProbe("minimalEffect")
  const minimalCli = await bundleProbe("minimalCli")
  const short = smallWorkspace()
  const long = smallWorkspace()
  writeHistory(short, template, 10)
  writeHistory(long, template, longHistory)
  const args = ["ralph", "--status", "--change", CHANGE]
  // Both must print a full table of the last 10 records, or the comparison means nothing.
  for (const dir of [short, long]) {
    const { code, stdout, stderr } = runSpool(args, dir)
    if (code !== 0 || !stdout.includes("recent iterations (last 10)")) throw new Error(`spool ralph --status in ${dir}: ${stderr || stdout}`)
  }
  const times = interleaved(
    [
      program("node -e 0", process.execPath, ["-e", "0"]),
      program("minimal Effect program", process.execPath, [minimalEffect]),
      program("minimal @effect/cli program", process.execPath, [minimalCli, "--name", "bench"]),
      spoolProgram("spool --version", ["--version"], { cwd: short }),
      spoolProgram("status, 10 records", args, { cwd: short }),
      spoolProgram(`status, ${longHistory} records`, args, { cwd: long })
    ],
    { runs, warmup: 2 }
  )
  return {
    node: times["node -e 0"],
    minimalEffect: times["minimal Effect program"],
    minimalCli: times["minimal @effect/cli program"],
    version: times["spool --version"],
    short: times["status, 10 records"],
    long: times[`status, ${longHistory} records`],
    longHistory
  }
}
