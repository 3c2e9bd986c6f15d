// The results of whole-scope runs, group by group, kept in `mutation/results.json` (committed with
// MUTATION.md): a group whose modules, tests and configuration have not changed since its last run
// keeps that run's results, so a whole run stopped part of the way goes on from where it stopped,
// on another day and in another clone. `pnpm mutate -- --fresh` runs every group again.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, posix } from "node:path"

export const RESULTS_FILE = "mutation/results.json"

/** A file glob as stryker reads one (`*`, `**`, `?`, `{a,b}`), as a regular expression. */
const globPattern = (glob) =>
  new RegExp(`^${
    glob.replace(/[.+^$()|[\]\\]/g, "\\$&")
      .replace(/\*\*\/?|\*|\?|\{([^}]*)\}/g, (token, alternatives) =>
        token.startsWith("**") ? "(?:.*/)?" : token === "*" ? "[^/]*" : token === "?" ? "[^/]" : `(?:${alternatives.split(",").join("|")})`)
  }$`)

/** Whether a file (from the root) matches one of `globs`. */
export const matches = (globs) => {
  const patterns = globs.map(globPattern)
  return (file) => patterns.some((pattern) => pattern.test(file))
}

/** The files git tracks under packages/ that are there. */
export const trackedFiles = () =>
  execFileSync("git", ["ls-files", "packages"], { encoding: "utf8" }).split("\n").filter((file) => existsSync(file))

/** The statuses whose mutants are kept one by one; of the others (killed, timed out, not compiling) only counts are kept. */
const DETAILED = new Set(["Survived", "NoCoverage", "Ignored"])

/** The relative imports of a module and those of the shared fakes (`@spool/testkit/x`), as files from the root (`./a.js` is `a.ts`). */
const importsOf = (file, tracked) =>
  [...readFileSync(file, "utf8").matchAll(/(?:\bfrom|\bimport\s*\(?)\s*"((?:\.{1,2}|@spool\/testkit)\/[^"]+)"/g)]
    .map((match) =>
      match[1].startsWith("@spool/testkit/")
        ? `packages/testkit/src/${match[1].slice("@spool/testkit/".length).replace(/\.js$/, "")}.ts`
        : posix.normalize(posix.join(posix.dirname(file), match[1].replace(/\.js$/, ".ts")))
    )
    .filter((path) => tracked.has(path))

/** The modules that are not tests which `tests` import, directly or through one another. */
const helpersOf = (tests, tracked) => {
  const seen = new Set()
  const visit = (file) => {
    for (const path of importsOf(file, tracked)) {
      if (seen.has(path) || path.endsWith(".test.ts") || !(path.includes("/test/") || path.startsWith("packages/testkit/"))) continue
      seen.add(path)
      visit(path)
    }
  }
  tests.forEach(visit)
  return [...seen]
}

/**
 * The versions installed for the root and for the packages `files` are in, as pnpm-lock.yaml has
 * them: another package's new dependency leaves a group's results standing.
 */
const installedFor = (files) => {
  const lines = readFileSync("pnpm-lock.yaml", "utf8").split("\n")
  const start = lines.indexOf("importers:")
  const end = lines.findIndex((line, i) => i > start && /^\S/.test(line))
  const wanted = new Set([".", ...files.map((file) => file.split("/").slice(0, 2).join("/"))])
  const kept = []
  let keep = false
  for (const line of lines.slice(start + 1, end === -1 ? undefined : end)) {
    const importer = /^  (\S[^:]*):$/.exec(line)
    if (importer !== null) keep = wanted.has(importer[1].replace(/^'|'$/g, ""))
    if (keep) kept.push(line)
  }
  return kept.join("\n")
}

/**
 * What a group's results depend on, as a hash: its modules, its tests, the helpers and shared fakes
 * (packages/testkit) they import, directly or through one another, the files beside them that are
 * not code (fixtures), Stryker's options (not where its plugins are, nor the other groups), the tests'
 * configuration and the versions installed for the root and the packages of those files. As with Stryker's own
 * incremental mode, a change to a module the tests use but that is not mutated is not seen.
 */
export const fingerprintOf = (group, tracked, options) => {
  const tests = tracked.filter(matches(group.tests))
  const testDirs = new Set(tests.map((file) => `${dirname(file)}/`))
  // Beside the tests: the helpers they import (and those import), and every file that is not code
  // (fixtures), but not a folder's test map, which no test reads.
  const fixtures = tracked.filter((file) =>
    !file.endsWith(".ts") && [...testDirs].some((dir) => file.startsWith(dir) && file !== `${dir}README.md`)
  )
  const beside = [...helpersOf(tests, new Set(tracked)), ...fixtures, ...tracked.filter(matches(group.reads ?? []))]
  const files = [...new Set([...group.files, ...tests, ...beside, "vitest.mutate.config.ts"])].sort()
  const hash = createHash("sha256")
  hash.update(JSON.stringify({ ...options, plugins: undefined, mutate: undefined })).update("\0")
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(file)).update("\0")
  hash.update(installedFor(files))
  return hash.digest("hex")
}

/** A mutant as the report reads it: its file (from the root), status and, where kept, what it was. */
export const mutantOf = (file, m) => ({
  file,
  status: m.status,
  line: m.location.start.line,
  mutator: m.mutatorName,
  replacement: String(m.replacement ?? ""),
  reason: m.statusReason ?? "",
  static: m.static === true
})

/** A group's mutants as stored: counts by file and status, and the mutants a report lists. */
export const storedOf = (mutants) => {
  const counts = {}
  const listed = []
  for (const mutant of mutants) {
    if (DETAILED.has(mutant.status)) listed.push(mutant)
    else {
      const byStatus = (counts[mutant.file] ??= {})
      byStatus[mutant.status] = (byStatus[mutant.status] ?? 0) + 1
    }
  }
  return { counts, listed }
}

/** The mutants of a stored group again, those only counted standing for themselves by file and status. */
export const mutantsOf = (stored) => [
  ...Object.entries(stored.counts).flatMap(([file, byStatus]) =>
    Object.entries(byStatus).flatMap(([status, count]) => Array.from({ length: count }, () => ({ file, status })))
  ),
  ...stored.listed
]

export const readResults = () => {
  if (!existsSync(RESULTS_FILE)) return { groups: {} }
  try {
    const results = JSON.parse(readFileSync(RESULTS_FILE, "utf8"))
    return typeof results === "object" && results !== null && typeof results.groups === "object" ? results : { groups: {} }
  } catch {
    console.error(`${RESULTS_FILE} is not JSON: every group runs again`)
    return { groups: {} }
  }
}

/** Written whole, through a temporary file: a run stopped while writing leaves the last complete one. */
export const writeResults = (results) => {
  const temporary = `${RESULTS_FILE}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(results, null, 1)}\n`)
  renameSync(temporary, RESULTS_FILE)
}
