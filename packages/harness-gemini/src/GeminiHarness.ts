import { AgentHarness, type SandboxNeeds } from "@spool/core"
import { makeGeminiOutput } from "./GeminiOutput.js"

export const name = "gemini"

/** What gemini needs inside spool's sandbox (`--sandbox`); its own (a container) is off unless asked for, so it does not nest. */
export const sandboxNeeds: SandboxNeeds = {
  stateDirs: [".gemini"],
  stateEnv: ["GEMINI_CLI_HOME"],
  hosts: ["generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"],
  env: ["GEMINI_*", "GOOGLE_*"],
  baseUrlEnv: ["GOOGLE_GEMINI_BASE_URL"]
}

/**
 * gemini: `model` is passed as `-m` (`gemini-2.5-pro`); `allowAll` is `--yolo`. Tests point
 * gemini at a fake model server through `GOOGLE_GEMINI_BASE_URL` and a private HOME in `env`.
 */
export type GeminiHarnessOptions = AgentHarness.AgentOptions

/**
 * The arguments of one iteration. The prompt is not among them: gemini reads it from stdin, which
 * is not a terminal, and so runs headless. Without `--allow-all` gemini keeps its default approval
 * mode, in which a headless run offers the model only the tools that need no approval.
 */
export const commandArgs = (options: Pick<GeminiHarnessOptions, "model" | "allowAll">): Array<string> => [
  "--output-format",
  "stream-json",
  ...(options.model === null ? [] : ["-m", options.model]),
  ...(options.allowAll ? ["--yolo"] : [])
]

/**
 * Runs each iteration as one `gemini --output-format stream-json`, prompt on stdin. gemini starts
 * a second node process of itself; both are in the process group runProcess stops as a whole.
 */
export const layer = (options: GeminiHarnessOptions) =>
  AgentHarness.layer({
    program: {
      harness: name,
      program: "gemini",
      envVar: "SPOOL_GEMINI_BIN",
      binary: options.binary,
      pathEnv: options.pathEnv,
      install: "install it with `npm install -g @google/gemini-cli`"
    },
    // gemini reports the tokens of the run, never cost.
    reports: { cost: false, tokens: true },
    args: () => commandArgs(options),
    ...(options.env === undefined ? {} : { env: options.env }),
    output: (request) => makeGeminiOutput({ cwd: request.cwd })
  })
