import { AgentHarness, type HarnessRequest } from "@spool/core"
import { makeCodexOutput } from "./CodexOutput.js"

export const name = "codex"

/**
 * codex: `model` is passed as `-m` (`gpt-5.5`); `allowAll` is `--dangerously-bypass-approvals-and-sandbox`.
 * Tests point codex at a fake model server through `CODEX_HOME` in `env`.
 */
export type CodexHarnessOptions = AgentHarness.AgentOptions

/**
 * The arguments of one iteration; the prompt goes to stdin (`-`). Without `--allow-all` codex
 * runs in its `workspace-write` sandbox: the default of `exec`, read-only, would let every edit
 * of the work tree fail while the run still exits 0. `--ephemeral` keeps no session files, and
 * `--skip-git-repo-check` lets spool run outside a git repository as the other harnesses do.
 */
export const commandArgs = (
  options: Pick<CodexHarnessOptions, "model" | "allowAll">,
  request: Pick<HarnessRequest, "cwd">
): Array<string> => [
  "exec",
  "--json",
  "--skip-git-repo-check",
  "--ephemeral",
  "-C",
  request.cwd,
  ...(options.allowAll ? ["--dangerously-bypass-approvals-and-sandbox"] : ["--sandbox", "workspace-write"]),
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
