import { AgentHarness, type SandboxNeeds } from "@spool/core"
import { makeCopilotOutput } from "./CopilotOutput.js"

export const name = "copilot"

/**
 * What copilot needs inside spool's sandbox (`--sandbox`): its own directory (`~/.copilot`: config,
 * sessions, logs, and each run's usage file), its unpacked package (`~/.cache/copilot`, unpacked
 * on its first run), GitHub's Copilot API and its sign-in, or the base URL of a model of one's own.
 */
export const sandboxNeeds: SandboxNeeds = {
  stateDirs: [".copilot", ".cache/copilot"],
  stateEnv: ["COPILOT_HOME", "COPILOT_CACHE_HOME", "COPILOT_PKG_CACHE_HOME", "XDG_CACHE_HOME/copilot"],
  hosts: ["*.githubcopilot.com", "api.github.com", "github.com"],
  env: ["COPILOT_*", "GH_*", "GITHUB_*"],
  baseUrlEnv: ["COPILOT_PROVIDER_BASE_URL"]
}

/**
 * copilot: `model` is passed as `--model`; `allowAll` is `--allow-all` (every tool, path and URL,
 * as `--yolo`). Tests point copilot at a fake model server through its own-model variables
 * (`COPILOT_PROVIDER_BASE_URL`, ...) and a private HOME in `env`.
 */
export interface CopilotHarnessOptions extends AgentHarness.AgentOptions {
  /** copilot's own directory (`stateDirOf`): each run's usage file is written in a private directory made there. */
  readonly stateDir: string
}

/** copilot's own directory: `COPILOT_HOME` when it is an absolute path, else `~/.copilot`. */
export const stateDirOf = (env: Readonly<Record<string, string | undefined>>): string =>
  env.COPILOT_HOME?.startsWith("/") === true ? env.COPILOT_HOME : `${(env.HOME ?? "/").replace(/\/+$/, "")}/.copilot`

/**
 * The arguments of one iteration. The prompt is not among them: copilot reads it from its stdin,
 * which is not a terminal, and runs it as with `-p` (an argv word is limited to 128 KiB). Without
 * `--allow-all` copilot approves no tool call that needs approval (a write, a shell command other
 * than a reading one such as `ls`): each is denied, and the run goes on. `--no-auto-update` runs the copilot installed, never one it downloads.
 */
export const commandArgs = (options: Pick<CopilotHarnessOptions, "model" | "allowAll">): Array<string> => [
  "--output-format",
  "json",
  "--no-auto-update",
  ...(options.model === null ? [] : ["--model", options.model]),
  ...(options.allowAll ? ["--allow-all"] : [])
]

/**
 * Runs each iteration as one `copilot --output-format json`, prompt on stdin. Its events carry no
 * tokens: `--usage-output-file` writes them at the end of the run, read once copilot has exited.
 * copilot retries a 429 for minutes by itself: the run ends at the first limit it reports, whose
 * retry-after is then read from the run's log.
 */
export const layer = (options: CopilotHarnessOptions) =>
  AgentHarness.layer({
    program: {
      harness: name,
      program: "copilot",
      envVar: "SPOOL_COPILOT_BIN",
      binary: options.binary,
      pathEnv: options.pathEnv,
      install: "install it with `npm install -g @github/copilot`"
    },
    // copilot reports the tokens of the run, never a cost in money.
    reports: { cost: false, tokens: true },
    args: () => commandArgs(options),
    report: { dir: options.stateDir, args: (file) => ["--usage-output-file", file] },
    // Where copilot would log (`~/.copilot/logs`), a directory per run: the retry-after of a limit is there only.
    log: { dir: `${options.stateDir}/logs`, args: (dir) => ["--log-dir", dir] },
    ...(options.env === undefined ? {} : { env: options.env }),
    output: (request) => makeCopilotOutput({ cwd: request.cwd }),
    endsOnLimit: true
  })
