import { defineProject } from "vitest/config"
import { pageDefine } from "./page.mjs"

export default defineProject({
  // The dashboard's script, bundled as the build bundles it, for the tests that run the server from source.
  define: await pageDefine(),
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    // The end-to-end tests spawn the built binary: build it once, fresh, before they run.
    globalSetup: ["test/globalSetup.ts"],
    // Generous: on a loaded machine one run of the built binary can take many times its usual time,
    // and a busy machine must not fail a test. A hang still fails, after five minutes.
    testTimeout: 300_000
  }
})
