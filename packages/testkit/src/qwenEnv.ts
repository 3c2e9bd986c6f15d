import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/*
 * Qwen Code pointed at the fake OpenAI-compatible server of fakeModelServer.ts: its OpenAI
 * variables (key, base URL and model, which it needs all three), a private HOME whose
 * `.qwen/settings.json` turns off what would reach elsewhere or ask the model more. Reusable by
 * end-to-end tests of the CLI.
 */

/** The model tests ask for (`--model qwen-test-model`), as the server sees it. */
export const TEST_MODEL = "qwen-test-model"

/**
 * qwen's settings for tests: no memory extraction or consolidation after a run (each a model
 * request of its own, which would take the script's next turn), no usage statistics, no update check.
 */
export const TEST_SETTINGS = {
  memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
  privacy: { usageStatisticsEnabled: false },
  general: { enableAutoUpdate: false }
}

/**
 * Writes a private home (`<root>/.qwen/settings.json`) and returns the environment that sends
 * every model request to `baseURL` and nothing anywhere else. The user's own ~/.qwen is never read.
 */
export const qwenEnv = (options: { readonly baseURL: string; readonly root: string }): Record<string, string> => {
  const qwenDir = path.join(options.root, ".qwen")
  fs.mkdirSync(qwenDir, { recursive: true })
  fs.writeFileSync(path.join(qwenDir, "settings.json"), JSON.stringify(TEST_SETTINGS, null, 2))
  return {
    HOME: options.root,
    QWEN_HOME: qwenDir,
    OPENAI_BASE_URL: options.baseURL,
    OPENAI_API_KEY: "fake-key",
    OPENAI_MODEL: TEST_MODEL,
    QWEN_USAGE_STATISTICS_ENABLED: "0",
    QWEN_CODE_DISABLE_PRECONNECT: "1"
  }
}

/** The qwen binary @spool/harness-qwen installs (@qwen-code/qwen-code, pinned there). */
export const QWEN_BIN = fileURLToPath(new URL("../../harness-qwen/node_modules/.bin/qwen", import.meta.url))
