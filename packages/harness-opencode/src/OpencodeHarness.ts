import { AgentHarness, type HarnessRequest, type SandboxNeeds } from "@spool/core"
import { makeOpencodeOutput } from "./OpencodeOutput.js"

export const name = "opencode"

/** What opencode needs inside spool's sandbox (`--sandbox`): its data, config, cache and state directories, and its providers' hosts. */
export const sandboxNeeds: SandboxNeeds = {
  stateDirs: [".local/share/opencode", ".config/opencode", ".cache/opencode", ".local/state/opencode"],
  stateEnv: ["XDG_DATA_HOME/opencode", "XDG_CONFIG_HOME/opencode", "XDG_CACHE_HOME/opencode", "XDG_STATE_HOME/opencode"],
  hosts: ["api.anthropic.com", "api.openai.com", "opencode.ai", "models.dev"],
  env: ["OPENCODE_*", "ANTHROPIC_*", "OPENAI_*", "OPENROUTER_*", "GEMINI_*", "GOOGLE_*", "XDG_*"],
  baseUrlEnv: ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"]
}

/** opencode: `model` is `provider/model`; `allowAll` is `--auto` (rules that deny still apply). */
export type OpencodeHarnessOptions = AgentHarness.AgentOptions

/**
 * The arguments of one iteration. The prompt is not among them: it goes to stdin, which opencode
 * appends to the (empty) message verbatim, whereas argv words get quoted and one argument is
 * limited to 128 KiB. The title is given so opencode makes no extra model request to invent one.
 */
export const commandArgs = (
  options: Pick<OpencodeHarnessOptions, "model" | "allowAll">,
  request: Pick<HarnessRequest, "changeId" | "iteration">
): Array<string> => [
  "run",
  "--format",
  "json",
  "--title",
  `spool ralph ${request.changeId} #${request.iteration}`,
  ...(options.model === null ? [] : ["--model", options.model]),
  ...(options.allowAll ? ["--auto"] : [])
]

/** Runs each iteration as one `opencode run --format json`, prompt on stdin. */
export const layer = (options: OpencodeHarnessOptions) =>
  AgentHarness.layer({
    program: {
      harness: name,
      program: "opencode",
      envVar: "SPOOL_OPENCODE_BIN",
      binary: options.binary,
      pathEnv: options.pathEnv,
      install: "install it with `npm install -g opencode-ai`"
    },
    reports: { cost: true, tokens: true },
    args: (request) => commandArgs(options, request),
    ...(options.env === undefined ? {} : { env: options.env }),
    output: (request) => makeOpencodeOutput({ cwd: request.cwd })
  })
