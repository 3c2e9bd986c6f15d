import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    // The end-to-end tests spawn the built binary: build it once, fresh, before they run.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000
  }
})
