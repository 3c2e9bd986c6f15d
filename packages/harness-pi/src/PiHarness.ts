import { AgentHarness, type SandboxNeeds } from "@spool/core"
import { makePiOutput } from "./PiOutput.js"

export const name = "pi"

/** What pi needs inside spool's sandbox (`--sandbox`): its agent directory and its providers' hosts. */
export const sandboxNeeds: SandboxNeeds = {
  stateDirs: [".pi"],
  stateEnv: ["PI_CODING_AGENT_DIR"],
  hosts: ["api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com"],
  env: ["PI_*", "ANTHROPIC_*", "OPENAI_*", "GEMINI_*"],
  baseUrlEnv: ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"]
}

/**
 * pi: `model` is passed as `--model` (`anthropic/claude-sonnet-4-5`, or a pattern pi matches);
 * `allowAll` changes nothing: pi asks no approval for any tool call. Tests point pi at a fake
 * model server through a custom provider in `models.json` under `PI_CODING_AGENT_DIR` in `env`.
 */
export type PiHarnessOptions = AgentHarness.AgentOptions

/**
 * The arguments of one iteration. The prompt is not among them: with `-p` pi reads it from stdin.
 * `--no-session` keeps no session file: every iteration starts afresh from spool's prompt.
 */
export const commandArgs = (options: Pick<PiHarnessOptions, "model">): Array<string> => [
  "-p",
  "--mode",
  "json",
  "--no-session",
  ...(options.model === null ? [] : ["--model", options.model])
]

/** Runs each iteration as one `pi -p --mode json --no-session`, prompt on stdin. */
export const layer = (options: PiHarnessOptions) =>
  AgentHarness.layer({
    program: {
      harness: name,
      program: "pi",
      envVar: "SPOOL_PI_BIN",
      binary: options.binary,
      pathEnv: options.pathEnv,
      install: "install it with `npm install -g @mariozechner/pi-coding-agent`"
    },
    // pi reports the tokens and cost of each model request.
    reports: { cost: true, tokens: true },
    args: () => commandArgs(options),
    ...(options.env === undefined ? {} : { env: options.env }),
    output: (request) => makePiOutput({ cwd: request.cwd })
  })
