import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "harness-qwen",
    include: ["test/**/*.test.ts"],
    // Real git and agent processes can take seconds on a busy 2-core machine; no test measures time.
    testTimeout: 30_000
  }
})
