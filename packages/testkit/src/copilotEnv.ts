import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/*
 * Copilot CLI pointed at the fake OpenAI-compatible server of fakeModelServer.ts: its own-model
 * mode (`COPILOT_PROVIDER_*`), offline, with a private home. Reusable by end-to-end tests of the CLI.
 *
 * Copilot's binary unpacks a package of 235 MB on its first run, into `COPILOT_PKG_CACHE_HOME/pkg`
 * (else `$XDG_CACHE_HOME/copilot/pkg`). Every test shares one such cache, unpacked once, outside
 * any test's home: `unpackCopilot` makes it, whichever test process comes first, the others waiting.
 */

/** The model tests ask for (`--model copilot-test-model`); the server sees it as it is. */
export const TEST_MODEL = "copilot-test-model"

/** The copilot binary @spool/harness-copilot installs (@github/copilot, pinned there). */
export const COPILOT_BIN = fileURLToPath(new URL("../../harness-copilot/node_modules/.bin/copilot", import.meta.url))

/** Where the tests keep copilot's unpacked package: beside its binary, made once for every test. */
export const COPILOT_CACHE = fileURLToPath(new URL("../../harness-copilot/node_modules/.cache/copilot", import.meta.url))

/** A lock left this long by a process that died is taken over. */
const STALE_LOCK_MS = 10 * 60_000

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** Takes the lock directory `lock`, waiting while another process holds it. */
const takeLock = (lock: string) => {
  for (;;) {
    try {
      fs.mkdirSync(lock)
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    try {
      if (Date.now() - fs.statSync(lock).mtimeMs > STALE_LOCK_MS) fs.rmSync(lock, { recursive: true, force: true })
    } catch {
      // Given up by its holder meanwhile: try again.
    }
    pause(200)
  }
}

let unpacked = false

/**
 * Unpacks copilot's package into `COPILOT_CACHE` (`copilot --version` does, when it is not there
 * yet), one process at a time, so that the first run of the machine unpacks it once.
 */
export const unpackCopilot = (): void => {
  if (unpacked) return
  fs.mkdirSync(path.dirname(COPILOT_CACHE), { recursive: true })
  const lock = `${COPILOT_CACHE}.lock`
  takeLock(lock)
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "spool-copilot-unpack-"))
  try {
    const result = spawnSync(COPILOT_BIN, ["--version"], {
      env: { ...process.env, HOME: home, COPILOT_PKG_CACHE_HOME: COPILOT_CACHE, COPILOT_OFFLINE: "true", COPILOT_AUTO_UPDATE: "false" },
      encoding: "utf8",
      timeout: 600_000
    })
    if (result.status !== 0) throw new Error(`copilot could not unpack its package into ${COPILOT_CACHE}: ${result.stderr || result.error}`)
    unpacked = true
  } finally {
    fs.rmSync(home, { recursive: true, force: true })
    fs.rmSync(lock, { recursive: true, force: true })
  }
}

/**
 * The environment that runs copilot against `baseURL` alone: its own-model mode over the chat
 * completions API, offline (no GitHub sign-in, telemetry, web tools or updates), a private home
 * (`root`: its `~/.copilot` and caches) and the shared unpacked package. The model comes from
 * `--model`, as spool passes it. The user's own ~/.copilot is never read.
 */
export const copilotEnv = (options: { readonly baseURL: string; readonly root: string }): Record<string, string> => {
  unpackCopilot()
  fs.mkdirSync(options.root, { recursive: true })
  return {
    HOME: options.root,
    XDG_CACHE_HOME: path.join(options.root, ".cache"),
    COPILOT_PKG_CACHE_HOME: COPILOT_CACHE,
    COPILOT_PROVIDER_BASE_URL: options.baseURL,
    COPILOT_PROVIDER_TYPE: "openai",
    COPILOT_PROVIDER_WIRE_API: "completions",
    COPILOT_PROVIDER_API_KEY: "fake-key",
    COPILOT_OFFLINE: "true",
    COPILOT_AUTO_UPDATE: "false"
  }
}
