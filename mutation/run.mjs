// `pnpm mutate`: mutation testing of the modules in scope (stryker.config.mjs), then MUTATION.md.
// `pnpm mutate -- <file glob>...` tests only those files and prints their scores; MUTATION.md is
// written by a run of the whole scope only. Both are incremental: a mutant whose code and tests
// have not changed since the last run keeps its result (reports/mutation/incremental.json), and a
// run of the whole scope keeps, in any clone, the results of each group whose files have not changed
// since it last ran (mutation/results.json); `pnpm mutate -- --fresh` runs every group again and
// tests every mutant again, reusing neither.
import { Stryker } from "@stryker-mutator/core"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { relative } from "node:path"
import options, { groups } from "../stryker.config.mjs"
import { equivalents } from "./equivalents.mjs"
import { fingerprintOf, matches, mutantOf, mutantsOf, readResults, RESULTS_FILE, storedOf, trackedFiles, writeResults } from "./results.mjs"

const fresh = process.argv.includes("--fresh")
const globs = process.argv.slice(2).filter((arg) => arg !== "--" && arg !== "--fresh")
const whole = globs.length === 0
const started = Date.now()

// Each group's files, those of the given globs only when some are given.
const tracked = trackedFiles()
const wanted = whole ? () => true : matches(globs)
const runs = groups
  .map((group) => ({ ...group, files: tracked.filter(matches(group.mutate)).filter(wanted) }))
  .filter((group) => group.files.length > 0)
if (runs.length === 0) {
  console.error(`spool: no module in scope matches ${globs.join(" ")} (the scope is in stryker.config.mjs)`)
  process.exit(2)
}

const commit = (() => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
})()
/** The commit, and whether the files a run reads differ from it. */
const source = (() => {
  try {
    const changed = execFileSync("git", ["status", "--porcelain", "--", "packages", "stryker.config.mjs", "vitest.mutate.config.ts"], { encoding: "utf8" })
    return changed.trim() === "" ? commit : `${commit} with uncommitted changes`
  } catch {
    return commit
  }
})()

/** Killed or timed out counts as detected; equivalent mutants (with their reason) and ones that do not compile are not counted. */
const VALID = new Set(["Killed", "Timeout", "Survived", "NoCoverage"])
const DETECTED = new Set(["Killed", "Timeout"])

const percent = (detected, valid) => (valid === 0 ? "n/a" : `${((100 * detected) / valid).toFixed(1)}%`)
const where = (m) => `${m.file}:${m.line}`
const code = (text) => `\`${String(text).replace(/\s+/g, " ").replace(/\|/g, "\\|").replace(/`/g, "'").slice(0, 80)}\``
const sourceLines = new Map()
const lineOf = (file, line) => {
  if (!sourceLines.has(file)) sourceLines.set(file, readFileSync(file, "utf8").split("\n"))
  return sourceLines.get(file)[line - 1] ?? ""
}
/** The entry of mutation/equivalents.mjs a surviving mutant is, if any. */
const equivalentOf = (m) =>
  equivalents.find((entry) =>
    entry.file === m.file && entry.mutator === m.mutator && entry.replacement === m.replacement.replace(/\s+/g, " ") &&
    lineOf(m.file, m.line).includes(entry.line)
  )

/** The scores of `results` (the groups `done`); MUTATION.md too for a run of the whole scope. */
const report = (results, done, left) => {
  const minutes = (Date.now() - started) / 60_000
  const byFile = new Map()
  const used = new Set()
  for (const mutant of results) {
    const file = mutant.file
    const row = byFile.get(file) ?? { detected: 0, timedOut: 0, valid: 0, survived: [], equivalent: [] }
    const listed = mutant.status === "Survived" || mutant.status === "NoCoverage" ? equivalentOf(mutant) : undefined
    if (listed !== undefined) used.add(listed)
    if (mutant.status === "Ignored") row.equivalent.push({ mutant, reason: mutant.reason })
    else if (listed !== undefined) row.equivalent.push({ mutant, reason: listed.reason })
    else {
      if (VALID.has(mutant.status)) row.valid++
      if (DETECTED.has(mutant.status)) row.detected++
      if (mutant.status === "Timeout") row.timedOut++
      if (mutant.status === "Survived" || mutant.status === "NoCoverage") row.survived.push(mutant)
    }
    byFile.set(file, row)
  }
  const files = [...byFile.keys()].sort()
  const total = files.reduce((sum, file) => ({
    detected: sum.detected + byFile.get(file).detected,
    timedOut: sum.timedOut + byFile.get(file).timedOut,
    valid: sum.valid + byFile.get(file).valid
  }), { detected: 0, timedOut: 0, valid: 0 })
  const table = [
    "| module | detected | of which timed out | valid | score |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...files.map((file) => {
      const row = byFile.get(file)
      return `| ${file} | ${row.detected} | ${row.timedOut} | ${row.valid} | ${percent(row.detected, row.valid)} |`
    }),
    `| **all** | ${total.detected} | ${total.timedOut} | ${total.valid} | **${percent(total.detected, total.valid)}** |`
  ]
  const survivors = files.flatMap((file) =>
    byFile.get(file).survived.map((m) => `- ${where(m)} ${m.mutator} (${m.status}${m.static ? ", static" : ""}): ${code(m.replacement)}`)
  )
  console.log(`\n${table.join("\n")}\n`)
  if (survivors.length > 0) console.log(`Surviving mutants:\n${survivors.join("\n")}\n`)
  console.log(`Mutation testing took ${minutes.toFixed(1)} minutes so far.`)
  if (!whole) return
  const stale = done.length === groups.length ? equivalents.filter((entry) => !used.has(entry)) : []
  for (const entry of stale) console.log(`mutation/equivalents.mjs: no surviving mutant is ${entry.file} ${entry.mutator} ${entry.replacement} (${entry.line})`)
  const equivalentRows = files.flatMap((file) =>
    byFile.get(file).equivalent.map(({ mutant, reason }) => `| ${where(mutant)} | ${mutant.mutator} | ${code(mutant.replacement)} | ${reason} |`)
  )
  const text = [
    "# Mutation testing",
    "",
    "Written by `pnpm mutate` (Stryker, with the vitest runner and the TypeScript checker) from a run",
    "of the whole scope in `stryker.config.mjs`, group by group, each group's modules against that",
    "group's own unit tests. The score of a module is its killed and timed-out mutants over its valid",
    "ones (killed, timed out, survived, not covered); mutants that do not compile are not valid, and",
    "equivalent mutants, which change no behaviour, are not counted: they are marked in the source",
    "with a `Stryker disable` comment, or listed in `mutation/equivalents.mjs`, each with its reason,",
    "and listed below. A mutant times out when its tests run past Stryker's limit (the tests' own",
    "time, half again, plus `timeoutMS` in `stryker.config.mjs`), as a mutant that loops for ever does;",
    "on a busy machine a mutant may time out that an idle one would have seen survive, so a score is",
    "only as good as the run was undisturbed, and the timed-out column says how much of it rests on that.",
    "",
    `A group whose modules, tests (and the files beside them) and configuration have not changed since`,
    `its last run keeps that run's results (\`${RESULTS_FILE}\`), so a whole run may span several`,
    "sittings; the groups below say which ran when. `pnpm mutate -- --fresh` runs them all again.",
    "",
    "A survivor marked *static* is in code that runs when its module loads; such a mutant is tested",
    "with the module loaded afresh and every test of its group run.",
    "",
    `- date: ${new Date().toISOString()}`,
    `- commit: ${source}`,
    `- time taken by this run: ${minutes.toFixed(1)} minutes (incremental: mutants whose code and tests did not change kept their earlier results)`,
    `- groups (minutes each): ${minutesByGroup.join(", ")}`,
    ...(left.length === 0 ? [] : [`- **groups not run yet** (the run was stopped): ${left.join(", ")}`]),
    "",
    ...table,
    "",
    "## Surviving mutants",
    "",
    ...(survivors.length === 0 ? ["None."] : survivors),
    "",
    "## Equivalent mutants",
    "",
    ...(equivalentRows.length === 0
      ? ["None."]
      : ["| where | mutator | replacement | why it changes no behaviour |", "| --- | --- | --- | --- |", ...equivalentRows]),
    ""
  ].join("\n")
  writeFileSync("MUTATION.md", text)
  console.log("MUTATION.md written.")
}

// One run a group, each against its own tests. Stryker's incremental file holds the mutants of its
// last run only (one group's), and reuses a surviving static mutant even when a test that kills it
// was added: for such a group, remove reports/mutation/incremental.json and its entry in results.json.
// A run of the whole scope rewrites MUTATION.md and mutation/results.json after each group, so a
// stopped run leaves what it did, and the next one, in this clone or another, goes on from there.
const stored = whole ? readResults() : { groups: {} }
// Every group's fingerprint is taken before the first Stryker run: Stryker merges each run's options
// into the object stryker.config.mjs exports, and fills in its defaults there, so a fingerprint taken
// after a run would never match one taken in a fresh process: once a group had run, no later one was kept.
const fingerprints = new Map(runs.map((group) => [group.name, whole ? fingerprintOf(group, tracked, options) : null]))

/** Runs Stryker on one group, against that group's tests; its mutants, and the minutes it took. */
const runGroup = async (group) => {
  const groupStarted = Date.now()
  console.log(`\n== ${group.name}: ${group.files.join(" ")}\n`)
  const own = new Set(group.files)
  // The group's tests are chosen in vitest.mutate.config.ts, not with Stryker's `testFiles`: with
  // that, a mutant in code that runs when its module loads is activated only after the load.
  process.env.SPOOL_MUTATE_TESTS = JSON.stringify(group.tests)
  // The checker's project is the group's files alone (what they import comes with them): checking a
  // mutant then retypes those files, not every module that depends on them, which was most of the time
  // a run took. A mutant that breaks only a dependent's types is run against the tests instead.
  writeFileSync("tsconfig.mutate-group.json", `${JSON.stringify({ extends: "./tsconfig.base.json", files: group.files }, null, 2)}\n`)
  const run = await new Stryker({
    mutate: group.files,
    tsconfigFile: "tsconfig.mutate-group.json",
    incrementalFile: "reports/mutation/incremental.json",
    // --fresh reuses no earlier result: every mutant is tested again (and the incremental file rewritten).
    force: fresh,
    jsonReporter: { fileName: `reports/mutation/${group.name}.json` },
    // The sandbox holds what the group's tests read beyond the folders it copies (`reads`): a
    // directory left out whole cannot have a part of it put back, so each left-out one is left out by its contents.
    ...(group.reads === undefined
      ? {}
      : {
        ignorePatterns: [
          ...options.ignorePatterns.map((pattern) => group.reads.some((glob) => glob.startsWith(`${pattern}/`)) ? `${pattern}/**` : pattern),
          ...group.reads.map((glob) => `!${glob}`)
        ]
      })
  }).runMutationTest()
  const mutants = run
    .map((mutant) => mutantOf(relative(process.cwd(), mutant.fileName), mutant))
    .filter((mutant) => own.has(mutant.file))
  return { mutants, minutes: Number(((Date.now() - groupStarted) / 60_000).toFixed(1)) }
}

const results = []
const minutesByGroup = []
for (const [index, group] of runs.entries()) {
  const fingerprint = fingerprints.get(group.name)
  const kept = fresh ? undefined : stored.groups[group.name]
  if (kept !== undefined && kept.fingerprint === fingerprint) {
    console.log(`\n== ${group.name}: kept from the run of ${kept.date} at ${kept.commit} (its files have not changed since)`)
    results.push(...mutantsOf(kept))
    minutesByGroup.push(`${group.name} ${kept.minutes.toFixed(1)} (kept from ${kept.date.slice(0, 10)}, ${kept.commit})`)
  } else {
    const { mutants, minutes } = await runGroup(group)
    results.push(...mutants)
    minutesByGroup.push(`${group.name} ${minutes.toFixed(1)}`)
    if (whole) {
      stored.groups[group.name] = { fingerprint, commit: source, date: new Date().toISOString(), minutes, ...storedOf(mutants) }
      writeResults(stored)
    }
  }
  report(results, runs.slice(0, index + 1).map((g) => g.name), runs.slice(index + 1).map((g) => g.name))
}
