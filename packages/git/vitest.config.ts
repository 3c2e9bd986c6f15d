import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "git",
    include: ["test/**/*.test.ts"]
  }
})
