import { AgentHarness, HarnessError, type SandboxNeeds } from "@spool/core"
import { Effect } from "effect"
import { makeClaudeOutput, rootHint } from "./ClaudeOutput.js"

export const name = "claude"

/** What claude needs inside spool's sandbox (`--sandbox`): its own sandbox is off in `-p`, so it does not nest. */
export const sandboxNeeds: SandboxNeeds = {
  stateDirs: [".claude"],
  stateFiles: [".claude.json", ".claude.json.backup"],
  stateEnv: ["CLAUDE_CONFIG_DIR", "CLAUDE_CODE_TMPDIR"],
  hosts: ["api.anthropic.com"],
  env: ["ANTHROPIC_*", "CLAUDE_*", "IS_SANDBOX", "DISABLE_*"],
  baseUrlEnv: ["ANTHROPIC_BASE_URL"]
}

/** claude: `model` is passed as it is (`sonnet`); `allowAll` is `--dangerously-skip-permissions`. */
export interface ClaudeHarnessOptions extends AgentHarness.AgentOptions {
  /** Whether spool runs as root: claude then refuses `--dangerously-skip-permissions` unless IS_SANDBOX=1. */
  readonly runsAsRoot: boolean
  /** The IS_SANDBOX claude inherits; spool never sets it. */
  readonly isSandbox: string | undefined
}

/**
 * The arguments of one iteration. The prompt is not among them: it goes to stdin (an argv word is
 * limited to 128 KiB). Sessions are not kept: every iteration starts afresh from spool's prompt.
 */
export const commandArgs = (options: Pick<ClaudeHarnessOptions, "model" | "allowAll">): Array<string> => [
  "-p",
  "--output-format",
  "stream-json",
  "--verbose",
  "--no-session-persistence",
  ...(options.model === null ? [] : ["--model", options.model]),
  ...(options.allowAll ? ["--dangerously-skip-permissions"] : [])
]

/** Fails when claude would refuse `--dangerously-skip-permissions` (as root outside a declared sandbox). */
export const checkRoot = (options: ClaudeHarnessOptions): Effect.Effect<void, HarnessError> => {
  const sandbox = options.env?.IS_SANDBOX ?? options.isSandbox
  return options.allowAll && options.runsAsRoot && sandbox !== "1"
    ? Effect.fail(new HarnessError({ harness: name, reason: "Refused", detail: `--allow-all: ${rootHint}` }))
    : Effect.void
}

/** Runs each iteration as one `claude -p --output-format stream-json --verbose`, prompt on stdin. */
export const layer = (options: ClaudeHarnessOptions) =>
  AgentHarness.layer({
    program: {
      harness: name,
      program: "claude",
      envVar: "SPOOL_CLAUDE_BIN",
      binary: options.binary,
      pathEnv: options.pathEnv,
      install: "install it with `npm install -g @anthropic-ai/claude-code`"
    },
    reports: { cost: true, tokens: true },
    check: checkRoot(options),
    args: () => commandArgs(options),
    ...(options.env === undefined ? {} : { env: options.env }),
    output: (request, now) => makeClaudeOutput({ cwd: request.cwd, now })
  })
