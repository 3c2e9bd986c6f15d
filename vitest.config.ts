import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*"],
    // Most end-to-end files wait on child processes (agents, git): three files at a time keep two
    // cores busy where the default (one fewer than the cores) would run them one after another.
    maxWorkers: 3,
    minWorkers: 1,
    // CI reads the JSON results to print a plain "N passed, N failed" closing line.
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".test-results.json" }]] : ["default"]
  }
})
