// `pnpm mutate`: mutation testing of the modules in scope (stryker.config.mjs), then MUTATION.md.
// `pnpm mutate -- <file glob>...` tests only those files and prints their scores; MUTATION.md is
// written by a run of the whole scope only. Both are incremental: a mutant whose code and tests
// have not changed since the last run keeps its result (reports/mutation/incremental.json).
import { Stryker } from "@stryker-mutator/core"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { relative } from "node:path"
import { groups } from "../stryker.config.mjs"
import { equivalents } from "./equivalents.mjs"

const globs = process.argv.slice(2).filter((arg) => arg !== "--")
const whole = globs.length === 0
const started = Date.now()

/** A file glob as stryker reads one (`*`, `**`, `?`, `{a,b}`), as a regular expression. */
const globPattern = (glob) =>
  new RegExp(`^${
    glob.replace(/[.+^$()|[\]\\]/g, "\\$&")
      .replace(/\*\*\/?|\*|\?|\{([^}]*)\}/g, (token, alternatives) =>
        token.startsWith("**") ? "(?:.*/)?" : token === "*" ? "[^/]*" : token === "?" ? "[^/]" : `(?:${alternatives.split(",").join("|")})`)
  }$`)
const matches = (globs) => {
  const patterns = globs.map(globPattern)
  return (file) => patterns.some((pattern) => pattern.test(file))
}

// Each group's files, those of the given globs only when some are given.
const tracked = execFileSync("git", ["ls-files", "packages"], { encoding: "utf8" }).split("\n").filter((file) => existsSync(file))
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

/** Killed or timed out counts as detected; equivalent mutants (with their reason) and ones that do not compile are not counted. */
const VALID = new Set(["Killed", "Timeout", "Survived", "NoCoverage"])
const DETECTED = new Set(["Killed", "Timeout"])

const percent = (detected, valid) => (valid === 0 ? "n/a" : `${((100 * detected) / valid).toFixed(1)}%`)
const where = (file, m) => `${file}:${m.location.start.line}`
const code = (text) => `\`${String(text).replace(/\s+/g, " ").replace(/\|/g, "\\|").replace(/`/g, "'").slice(0, 80)}\``
const sourceLines = new Map()
const lineOf = (file, line) => {
  if (!sourceLines.has(file)) sourceLines.set(file, readFileSync(file, "utf8").split("\n"))
  return sourceLines.get(file)[line - 1] ?? ""
}
/** The entry of mutation/equivalents.mjs a surviving mutant is, if any. */
const equivalentOf = (file, m) =>
  equivalents.find((entry) =>
    entry.file === file && entry.mutator === m.mutatorName && entry.replacement === String(m.replacement ?? "").replace(/\s+/g, " ") &&
    lineOf(file, m.location.start.line).includes(entry.line)
  )

/** The scores of `results` (the groups `done`); MUTATION.md too for a run of the whole scope. */
const report = (results, done, left) => {
  const minutes = (Date.now() - started) / 60_000
  const byFile = new Map()
  const used = new Set()
  for (const mutant of results) {
    const file = relative(process.cwd(), mutant.fileName)
    const row = byFile.get(file) ?? { detected: 0, timedOut: 0, valid: 0, survived: [], equivalent: [] }
    const listed = mutant.status === "Survived" || mutant.status === "NoCoverage" ? equivalentOf(file, mutant) : undefined
    if (listed !== undefined) used.add(listed)
    if (mutant.status === "Ignored") row.equivalent.push({ mutant, reason: mutant.statusReason ?? "" })
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
    byFile.get(file).survived.map((m) => `- ${where(file, m)} ${m.mutatorName} (${m.status}${m.static ? ", static" : ""}): ${code(m.replacement ?? "")}`)
  )
  console.log(`\n${table.join("\n")}\n`)
  if (survivors.length > 0) console.log(`Surviving mutants:\n${survivors.join("\n")}\n`)
  console.log(`Mutation testing took ${minutes.toFixed(1)} minutes so far.`)
  if (!whole) return
  const stale = done.length === groups.length ? equivalents.filter((entry) => !used.has(entry)) : []
  for (const entry of stale) console.log(`mutation/equivalents.mjs: no surviving mutant is ${entry.file} ${entry.mutator} ${entry.replacement} (${entry.line})`)
  const equivalentRows = files.flatMap((file) =>
    byFile.get(file).equivalent.map(({ mutant, reason }) => `| ${where(file, mutant)} | ${mutant.mutatorName} | ${code(mutant.replacement ?? "")} | ${reason} |`)
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
    "A survivor marked *static* is in code that runs when its module loads; such a mutant is tested",
    "with the module loaded afresh and every test of its group run.",
    "",
    `- date: ${new Date().toISOString()}`,
    `- commit: ${commit}`,
    `- time taken: ${minutes.toFixed(1)} minutes (incremental: mutants whose code and tests did not change kept their earlier results)`,
    `- groups run (minutes each): ${minutesByGroup.join(", ")}`,
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

// One run a group, each against its own tests; the incremental file keeps every group's results.
// A run of the whole scope rewrites MUTATION.md after each group, so a stopped run leaves what it did.
const results = []
const minutesByGroup = []
for (const [index, group] of runs.entries()) {
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
    jsonReporter: { fileName: `reports/mutation/${group.name}.json` }
  }).runMutationTest()
  results.push(...run.filter((mutant) => own.has(relative(process.cwd(), mutant.fileName))))
  minutesByGroup.push(`${group.name} ${((Date.now() - groupStarted) / 60_000).toFixed(1)}`)
  report(results, runs.slice(0, index + 1).map((g) => g.name), runs.slice(index + 1).map((g) => g.name))
}
