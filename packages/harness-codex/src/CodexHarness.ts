import { AgentHarness, type HarnessRequest, type SandboxNeeds } from "@spool/core"
import { makeCodexOutput } from "./CodexOutput.js"

export const name = "codex"

/**
 * What codex needs inside spool's sandbox (`--sandbox`). Its own sandbox, bubblewrap too, cannot
 * make the namespaces it needs inside spool's: there it runs with `--sandbox danger-full-access`,
 * spool's walls standing in for its own.
 */
export const sandboxNeeds: SandboxNeeds = {
  stateDirs: [".codex"],
  stateEnv: ["CODEX_HOME"],
  hosts: ["api.openai.com", "chatgpt.com"],
  env: ["OPENAI_*", "CODEX_*"],
  baseUrlEnv: ["OPENAI_BASE_URL"]
}

/**
 * codex: `model` is passed as `-m` (`gpt-5.5`); `allowAll` is `--dangerously-bypass-approvals-and-sandbox`.
 * Tests point codex at a fake model server through `CODEX_HOME` in `env`.
 */
export interface CodexHarnessOptions extends AgentHarness.AgentOptions {
  /** Inside spool's sandbox (`--sandbox`): codex's own is switched off, spool's walls standing in for it. */
  readonly walled?: boolean
}

/**
 * The arguments of one iteration; the prompt goes to stdin (`-`). Without `--allow-all` codex
 * runs in its `workspace-write` sandbox: the default of `exec`, read-only, would let every edit
 * of the work tree fail while the run still exits 0. `--ephemeral` keeps no session files, and
 * `--skip-git-repo-check` lets spool run outside a git repository as the other harnesses do.
 */
export const commandArgs = (
  options: Pick<CodexHarnessOptions, "model" | "allowAll" | "walled">,
  request: Pick<HarnessRequest, "cwd">
): Array<string> => [
  "exec",
  "--json",
  "--skip-git-repo-check",
  "--ephemeral",
  "-C",
  request.cwd,
  ...(options.allowAll
    ? ["--dangerously-bypass-approvals-and-sandbox"]
    : ["--sandbox", options.walled === true ? "danger-full-access" : "workspace-write"]),
  ...(options.model === null ? [] : ["-m", options.model]),
  "-"
]

/**
 * Runs each iteration as one `codex exec --json`, prompt on stdin. The npm package's `codex` is
 * a Node wrapper whose native child survives the wrapper's SIGKILL; both are in the process group
 * runProcess stops as a whole.
 */
export const layer = (options: CodexHarnessOptions) =>
  AgentHarness.layer({
    program: {
      harness: name,
      program: "codex",
      envVar: "SPOOL_CODEX_BIN",
      binary: options.binary,
      pathEnv: options.pathEnv,
      install: "install it with `npm install -g @openai/codex`"
    },
    // codex reports tokens per turn, never cost.
    reports: { cost: false, tokens: true },
    args: (request) => commandArgs(options, request),
    ...(options.env === undefined ? {} : { env: options.env }),
    output: (request, now) => makeCodexOutput({ cwd: request.cwd, now })
  })
