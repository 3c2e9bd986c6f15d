import { CommandHarness, type LoopState, type OutputReader, type SandboxNeeds, splitArgs, viewOfLog } from "@spool/core"
import { ClaudeHarness, ClaudeOutput } from "@spool/harness-claude"
import { CodexHarness, CodexOutput } from "@spool/harness-codex"
import { CopilotHarness, CopilotOutput } from "@spool/harness-copilot"
import { GeminiHarness, GeminiOutput } from "@spool/harness-gemini"
import { OpencodeHarness, OpencodeOutput } from "@spool/harness-opencode"
import { PiHarness, PiOutput } from "@spool/harness-pi"
import { QwenHarness, QwenOutput } from "@spool/harness-qwen"
import { Effect } from "effect"
import type { InvocationShape } from "../host/Invocation.js"
import { RequestError } from "../RequestError.js"

export interface HarnessSettings {
  readonly model: string | null
  readonly allowAll: boolean
  readonly harnessCommand: string | null
  /** Inside spool's sandbox: an agent's own sandbox that cannot nest there is switched off. */
  readonly walled?: boolean
}

/** The agent a loop runs: a harness by its name, with its settings. */
export interface AgentChoice extends HarnessSettings {
  readonly harness: string
}

/** What every agent harness takes: the settings, the program named by `variable` (else PATH). */
const agentOptions = (settings: HarnessSettings, variable: string, { env }: InvocationShape) => ({
  model: settings.model,
  allowAll: settings.allowAll,
  binary: env[variable]?.trim() || null,
  pathEnv: env.PATH
})

/** The harnesses `--harness` can name, each described by how its layer is made from the settings and the invocation. */
export const harnesses = {
  opencode: (settings: HarnessSettings, invocation: InvocationShape) =>
    Effect.succeed(OpencodeHarness.layer(agentOptions(settings, "SPOOL_OPENCODE_BIN", invocation))),
  claude: (settings: HarnessSettings, invocation: InvocationShape) =>
    Effect.succeed(ClaudeHarness.layer({
      ...agentOptions(settings, "SPOOL_CLAUDE_BIN", invocation),
      runsAsRoot: invocation.isRoot,
      isSandbox: invocation.env.IS_SANDBOX
    })),
  codex: (settings: HarnessSettings, invocation: InvocationShape) =>
    Effect.succeed(CodexHarness.layer({ ...agentOptions(settings, "SPOOL_CODEX_BIN", invocation), walled: settings.walled === true })),
  gemini: (settings: HarnessSettings, invocation: InvocationShape) =>
    Effect.succeed(GeminiHarness.layer(agentOptions(settings, "SPOOL_GEMINI_BIN", invocation))),
  pi: (settings: HarnessSettings, invocation: InvocationShape) =>
    Effect.succeed(PiHarness.layer(agentOptions(settings, "SPOOL_PI_BIN", invocation))),
  copilot: (settings: HarnessSettings, invocation: InvocationShape) =>
    Effect.succeed(CopilotHarness.layer({
      ...agentOptions(settings, "SPOOL_COPILOT_BIN", invocation),
      stateDir: CopilotHarness.stateDirOf(invocation.env)
    })),
  qwen: (settings: HarnessSettings, invocation: InvocationShape) =>
    Effect.succeed(QwenHarness.layer(agentOptions(settings, "SPOOL_QWEN_BIN", invocation))),
  command: (settings: HarnessSettings, invocation: InvocationShape) =>
    Effect.gen(function*() {
      if (settings.harnessCommand === null || settings.harnessCommand.trim() === "") {
        return yield* new RequestError({
          message: "--harness command needs --harness-command \"<program> <args>\" naming the agent to run",
          // The value that is there asks for the one that is not, or is empty.
          option: settings.harnessCommand === null ? "harness" : "harness-command"
        })
      }
      const argv = splitArgs(settings.harnessCommand)
      if (argv === null || argv.length === 0) {
        return yield* new RequestError({ message: "--harness-command has an unterminated quote; close it and try again", option: "harness-command" })
      }
      const [program, ...args] = argv
      return CommandHarness.layer({
        argv: [program!, ...args],
        pathEnv: invocation.env.PATH,
        model: settings.model,
        allowAll: settings.allowAll
      })
    })
} as const

export type HarnessName = keyof typeof harnesses

/** What each agent needs inside the sandbox, as its harness names it; a command is given only what `--allow-host` and `--pass-env` add. */
export const sandboxNeeds: Record<HarnessName, SandboxNeeds> = {
  opencode: OpencodeHarness.sandboxNeeds,
  claude: ClaudeHarness.sandboxNeeds,
  codex: CodexHarness.sandboxNeeds,
  gemini: GeminiHarness.sandboxNeeds,
  pi: PiHarness.sandboxNeeds,
  copilot: CopilotHarness.sandboxNeeds,
  qwen: QwenHarness.sandboxNeeds,
  command: { stateDirs: [], hosts: [], env: [], baseUrlEnv: [] }
}
export const harnessNames = Object.keys(harnesses) as ReadonlyArray<HarnessName>

export const harnessLayer = ({ harness, ...settings }: AgentChoice, invocation: InvocationShape) =>
  Object.hasOwn(harnesses, harness.trim())
    ? harnesses[harness.trim() as HarnessName](settings, invocation)
    : Effect.fail(new RequestError({ message: `unknown harness '${harness.trim()}'; known harnesses: ${harnessNames.join(", ")}`, option: "harness" }))

/** Each JSON agent's reader of its output; a command's output is shown as it came. */
const readers: Partial<Record<HarnessName, (cwd: string) => OutputReader>> = {
  opencode: (cwd) => OpencodeOutput.makeOpencodeOutput({ cwd }),
  claude: (cwd) => ClaudeOutput.makeClaudeOutput({ cwd, now: Date.now }),
  codex: (cwd) => CodexOutput.makeCodexOutput({ cwd, now: Date.now }),
  gemini: (cwd) => GeminiOutput.makeGeminiOutput({ cwd }),
  pi: (cwd) => PiOutput.makePiOutput({ cwd }),
  copilot: (cwd) => CopilotOutput.makeCopilotOutput({ cwd }),
  qwen: (cwd) => QwenOutput.makeQwenOutput({ cwd, now: Date.now })
}

/**
 * A loop's iteration log output as the harness that ran the iteration (`harness`: its record's,
 * else the run's) showed it in the terminal, file paths shown relative to where the agent ran (the
 * loop's worktree, else `root`): a JSON agent's events read as lines; a command's output, or an
 * unknown harness's, as logged.
 */
export const logView = (root: string) => (state: LoopState, output: string, harness: string | undefined = state.harness): string => {
  const reader = harness !== undefined && Object.hasOwn(readers, harness) ? readers[harness as HarnessName] : undefined
  return reader === undefined ? output : viewOfLog(reader(state.worktree ?? root), output)
}
