import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "harness-opencode",
    include: ["test/**/*.test.ts"]
  }
})
