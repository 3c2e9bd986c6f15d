import { readdirSync } from "node:fs"
import { defineConfig } from "vitest/config"

// The unit tests mutation testing runs: every package's tests of its source, without the tests that
// run the built `spool` or a real agent binary (they never load a mutant, and take seconds each).
const unit = (dir: string) => ({
  test: {
    name: dir,
    root: `packages/${dir}`,
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/**/*.e2e.test.ts", "test/**/*Harness.test.ts"],
    testTimeout: 30_000
  }
})

const packages = readdirSync("packages").filter((dir) => dir === "core" || dir === "git" || dir.startsWith("harness-"))

export default defineConfig({
  test: { projects: packages.map(unit) }
})
