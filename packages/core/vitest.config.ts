import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "core",
    include: ["test/**/*.test.ts"],
    // Tests that touch the disk can take seconds on a busy 2-core machine; none of them measures time.
    testTimeout: 30_000
  }
})
