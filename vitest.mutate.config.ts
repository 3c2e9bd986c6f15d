import { readdirSync } from "node:fs"
import { defineConfig } from "vitest/config"

// The unit tests mutation testing runs: every package's tests of its source, without the tests that
// run the built `spool` or a real agent binary (they never load a mutant, and take seconds each).
// `pnpm mutate` narrows them to one group's tests through SPOOL_MUTATE_TESTS (a JSON array of globs
// from the repository's root): the runner's own test-file filter would activate a mutant only once
// the modules are loaded, so a mutant in code that runs at load time would never be seen.
const only: ReadonlyArray<string> | undefined = process.env.SPOOL_MUTATE_TESTS === undefined
  ? undefined
  : JSON.parse(process.env.SPOOL_MUTATE_TESTS)

/** The globs of `only` in package `dir` (`packages/<dir or a pattern of it>/<rest>`), as globs from the package's root. */
const globsOf = (dir: string): ReadonlyArray<string> =>
  (only ?? []).flatMap((glob) => {
    const [, pkg, rest] = /^packages\/([^/]+)\/(.+)$/.exec(glob) ?? []
    if (pkg === undefined || rest === undefined) return []
    const pattern = new RegExp(`^${pkg.replace(/[.+^$()|[\]\\{}]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")}$`)
    return pattern.test(dir) ? [rest] : []
  })

const unit = (dir: string) => ({
  test: {
    name: dir,
    root: `packages/${dir}`,
    include: only === undefined ? ["test/**/*.test.ts"] : globsOf(dir),
    exclude: ["**/node_modules/**", "test/**/*.e2e.test.ts", "test/**/*Harness.test.ts"],
    testTimeout: 30_000
  }
})

const packages = readdirSync("packages")
  .filter((dir) => dir === "core" || dir === "git" || dir.startsWith("harness-"))
  .filter((dir) => only === undefined || globsOf(dir).length > 0)

export default defineConfig({
  test: { projects: packages.map(unit) }
})
